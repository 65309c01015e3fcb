import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields } from '@platform/shared';
import type { NamedDocument } from '../names/named-documents';

export interface ProjectDocument extends NamedDocument {
  accountId: string;
  description: string;
}

const projectSchema = new Schema<ProjectDocument>(
  {
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    nameKey: { type: String, required: true },
    description: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    deletedAt: { type: Date, default: null },
    ...outboxFields,
  },
  { collection: 'projects', versionKey: false, strict: 'throw' },
);

// Names are unique per account: a create or rename onto a taken name fails with 11000.
projectSchema.index({ accountId: 1, nameKey: 1 }, { unique: true });
// The account's list in the order it is read, the quota count and every lookup by owner.
projectSchema.index({ accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export type ProjectModel = Model<ProjectDocument>;

export const createProjectModel = (connection: Connection): ProjectModel =>
  connection.model<ProjectDocument>('Project', projectSchema);
