import type { AccountsRepository } from '../accounts/accounts.repository';
import type { VerifyGoogleIdToken } from './google-id-token';

export interface LoggedInAccount {
  id: string;
  email: string;
  name: string;
}

/** Exchanges a verified Google ID token for the account it names, creating it the first time. */
export async function logIn(
  credential: string,
  deps: { verifyIdToken: VerifyGoogleIdToken; accounts: AccountsRepository },
): Promise<LoggedInAccount> {
  const profile = await deps.verifyIdToken(credential);
  const account = await deps.accounts.upsertBySubject(profile);
  return { id: account.id, email: account.email, name: account.name };
}
