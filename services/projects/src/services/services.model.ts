import { Schema, type Connection, type Model, type Types } from 'mongoose';
import { outboxFields } from '@platform/shared';
import type { NamedDocument } from '../names/named-documents';

export interface ServiceDocument extends NamedDocument {
  accountId: string;
  projectId: Types.ObjectId;
}

const serviceSchema = new Schema<ServiceDocument>(
  {
    accountId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    nameKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
    deletedAt: { type: Date, default: null },
    ...outboxFields,
  },
  { collection: 'services', versionKey: false, strict: 'throw' },
);

// Names are unique per project: a create or rename onto a taken name fails with 11000. It also
// serves the cascade of a deleted project (its prefix).
serviceSchema.index({ projectId: 1, nameKey: 1 }, { unique: true });
// The project's list in the order it is read, and the quota count.
serviceSchema.index({ projectId: 1, accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export type ServiceModel = Model<ServiceDocument>;

export const createServiceModel = (connection: Connection): ServiceModel =>
  connection.model<ServiceDocument>('Service', serviceSchema);
