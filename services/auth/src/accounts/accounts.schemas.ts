import type { Account } from './accounts.repository';

/** `GET /api/accounts/me`: the account with its creation time. */
export const toCurrentAccount = (account: Account) => ({
  id: account.id,
  email: account.email,
  name: account.name,
  createdAt: account.createdAt.toISOString(),
});
