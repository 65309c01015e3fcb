import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';

/**
 * One variable of a service (contracts.md, Variables). A plain one keeps its `value`; a secret
 * one only `sealed` (SecretBox, bound to `variable:<serviceId>:<name>`), never its plaintext.
 */
export interface VariableDocument {
  _id: Types.ObjectId;
  accountId: string;
  projectId: Types.ObjectId;
  serviceId: Types.ObjectId;
  name: string;
  secret: boolean;
  value: string | null;
  sealed: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const variableSchema = new Schema<VariableDocument>(
  {
    accountId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, required: true },
    serviceId: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    secret: { type: Boolean, required: true },
    value: { type: String, default: null },
    sealed: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, strict: 'throw' },
);

// One variable per name in a service; it serves the list (sorted by name), every lookup by name
// and the removal with the service.
variableSchema.index({ serviceId: 1, name: 1 }, { unique: true });
// The removal with a deleted project.
variableSchema.index({ projectId: 1 });

export const variableModel = defineModel<VariableDocument>('Variable', variableSchema, 'variables');
