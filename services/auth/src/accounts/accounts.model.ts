import { Schema, type Connection, type Model } from 'mongoose';

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
  { collection: 'accounts', versionKey: false },
);
accountSchema.index({ sub: 1 }, { unique: true });

export function accountModel(connection: Connection): Model<AccountDocument> {
  return (
    (connection.models.Account as Model<AccountDocument> | undefined) ??
    connection.model<AccountDocument>('Account', accountSchema)
  );
}
