import type { AccountsRepository } from '../accounts/accounts.repository';
import type { VerifyGoogleIdToken } from './google-id-token';

export interface LoggedInAccount {
  id: string;
  email: string;
  name: string;
}

export class LoginService {
  constructor(
    private readonly verifyIdToken: VerifyGoogleIdToken,
    private readonly accounts: AccountsRepository,
  ) {}

  /** Exchanges a verified Google ID token for the account it names, creating it the first time. */
  async logIn(credential: string): Promise<LoggedInAccount> {
    const profile = await this.verifyIdToken(credential);
    const account = await this.accounts.upsertBySubject(profile);
    return { id: account.id, email: account.email, name: account.name };
  }
}
