import { Schema } from 'mongoose';
import { defineModel } from '@platform/shared';

/** One per account: a number that every claim of a build of the account that stays moves on. */
export interface AccountGateDoc {
  /** The account's id. */
  _id: string;
  seq: number;
}

const accountGateSchema = new Schema<AccountGateDoc>(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
  },
  { versionKey: false },
);

export const accountGateModel = defineModel<AccountGateDoc>(
  'AccountGate',
  accountGateSchema,
  'account_gates',
);
