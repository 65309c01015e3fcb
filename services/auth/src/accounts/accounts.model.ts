import { Schema, type InferSchemaType } from 'mongoose';
import { defineModel } from '@platform/shared';

const accountSchema = new Schema(
  {
    /** Google's stable account id (the ID token's `sub`): the account's identity. */
    sub: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastLoginAt: { type: Date, required: true },
  },
  { versionKey: false },
);
accountSchema.index({ sub: 1 }, { unique: true });

/** An account as stored: its type is the schema's own (one definition of its fields). */
export type AccountDocument = InferSchemaType<typeof accountSchema>;
export const accountModel = defineModel<AccountDocument>('Account', accountSchema, 'accounts');
