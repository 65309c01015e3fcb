import { Schema } from 'mongoose';
import { defineModel } from '@platform/shared';

export interface AccountDocument {
  /** Google's stable account id (the ID token's `sub`): the account's identity. */
  sub: string;
  email: string;
  name: string;
  createdAt: Date;
  lastLoginAt: Date;
}

const accountSchema = new Schema<AccountDocument>(
  {
    sub: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastLoginAt: { type: Date, required: true },
  },
  { versionKey: false },
);
accountSchema.index({ sub: 1 }, { unique: true });

export const accountModel = defineModel<AccountDocument>('Account', accountSchema, 'accounts');
