import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';
import { namedDocumentFields, type NamedDocument } from '../names/named-resources.model';

export interface ServiceDocument extends NamedDocument {
  accountId: string;
  projectId: Types.ObjectId;
}

const serviceSchema = new Schema<ServiceDocument>(
  {
    accountId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, required: true },
    ...namedDocumentFields,
  },
  { versionKey: false, strict: 'throw' },
);

// Names are unique per project: a create or rename onto a taken name fails with 11000. It also
// serves the cascade of a deleted project (its prefix).
serviceSchema.index({ projectId: 1, nameKey: 1 }, { unique: true });
// The project's list in the order it is read, and the quota count.
serviceSchema.index({ projectId: 1, accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export const serviceModel = defineModel<ServiceDocument>('Service', serviceSchema, 'services');
