import { openDatabase, type Runtime } from '@platform/shared';
import { AccountsRepository } from './accounts/accounts.repository';
import { createApp } from './app';
import type { Config } from './config';
import { createGoogleIdTokenVerifier } from './login/google-id-token';
import { LoginService } from './login/login.service';
import { createModels } from './models';

/**
 * The auth service's composition root, for main.ts (runService) and every test alike: opens
 * Mongo (indexes created) and builds the app on it. Nothing here needs a seam: tests point the
 * Google ID-token verifier at dev-idp's certificates through GOOGLE_CERTS_URL.
 */
export async function compose(config: Config, runtime: Runtime) {
  const { logger } = runtime;
  const { connection, models } = await openDatabase(config, runtime, createModels);

  const accounts = new AccountsRepository(models.accounts);
  const verifyIdToken = createGoogleIdTokenVerifier({
    clientId: config.GOOGLE_CLIENT_ID,
    certsUrl: config.GOOGLE_CERTS_URL,
  });
  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    accounts,
    login: new LoginService(verifyIdToken, accounts),
  });
  return { app, connection, models };
}
