import { randomBytes } from 'node:crypto';
import express from 'express';
import { startTestServer } from '@platform/shared/testing';
import { LOGIN_PATH } from '../login/auth-login';
import { startGateway, type TestGateway } from './start-gateway';

/** A new account id (24 lower-case hex digits, as auth makes them). */
export const newAccountId = () => randomBytes(12).toString('hex');

/** The credential the accounts auth signs in as `accountId`. */
export const credentialOf = (accountId: string) => `account:${accountId}`;

export interface AccountsGateway extends TestGateway {
  /** The accounts auth verified a login of, in order. */
  verifiedLogins: string[];
  /** Logs in as `accountId`; the cookie pair of its new session. */
  logInAs(accountId: string): Promise<string>;
}

/**
 * The gateway in front of an auth stand-in that signs in any number of accounts: a credential
 * `account:<id>` (credentialOf) logs in as account `<id>`, anything else is 401. For what one
 * account does to another's limits.
 */
export async function startAccountsGateway(env: Record<string, string>): Promise<AccountsGateway> {
  const verifiedLogins: string[] = [];
  const auth = express();
  auth.post(LOGIN_PATH, express.json(), (req, res) => {
    const credential = String((req.body as { credential?: unknown }).credential);
    if (!credential.startsWith('account:')) {
      res
        .status(401)
        .json({ error: 'UNAUTHORIZED', message: 'Invalid credential: login is required.' });
      return;
    }
    const id = credential.slice('account:'.length);
    verifiedLogins.push(id);
    res.json({ id, email: `${id}@example.com`, name: id });
  });
  const authServer = await startTestServer(auth);
  const gateway = await startGateway({ ...env, AUTH_URL: authServer.url }).catch(async (err) => {
    await authServer.close();
    throw err;
  });
  const closeGateway = gateway.close;
  return Object.assign(gateway, {
    verifiedLogins,
    logInAs: async (accountId: string) =>
      (await gateway.logIn({ credential: credentialOf(accountId) })).cookie,
    close: async () => {
      await closeGateway();
      await authServer.close();
    },
  });
}
