import type { Connection } from 'mongoose';
import { accountModel } from './accounts/accounts.model';

/** Every model of the auth service on `connection`; compose creates their indexes. */
export const createModels = (connection: Connection) => ({
  accounts: accountModel(connection),
});

export type Models = ReturnType<typeof createModels>;
