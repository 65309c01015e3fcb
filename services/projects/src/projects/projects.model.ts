import { Schema } from 'mongoose';
import { defineModel } from '@platform/shared';
import { namedDocumentFields, type NamedDocument } from '../names/named-resources.model';

export interface ProjectDocument extends NamedDocument {
  accountId: string;
  description: string;
}

const projectSchema = new Schema<ProjectDocument>(
  {
    accountId: { type: String, required: true },
    description: { type: String, default: '' },
    ...namedDocumentFields,
  },
  { versionKey: false, strict: 'throw' },
);

// Names are unique per account: a create or rename onto a taken name fails with 11000.
projectSchema.index({ accountId: 1, nameKey: 1 }, { unique: true });
// The account's list in the order it is read, the quota count and every lookup by owner.
projectSchema.index({ accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export const projectModel = defineModel<ProjectDocument>('Project', projectSchema, 'projects');
