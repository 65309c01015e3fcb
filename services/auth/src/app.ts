import type { Express } from 'express';
import type { Connection } from 'mongoose';
import { createServiceApp, pingMongo, type Logger, type Metrics } from '@platform/shared';
import { AccountsRepository } from './accounts/accounts.repository';
import { accountsRouter } from './accounts/accounts.routes';
import type { VerifyGoogleIdToken } from './login/google-id-token';
import { loginRouter } from './login/login.routes';
import { LoginService } from './login/login.service';
import type { Models } from './models';

export interface AuthAppDeps {
  logger: Logger;
  metrics: Metrics;
  connection: Connection;
  models: Models;
  internalSecret: string;
  verifyIdToken: VerifyGoogleIdToken;
}

/**
 * The login callback is a public route: it is itself the authentication, and the gateway
 * cannot know the account before it (docs/architecture.md). Everything else needs the identity.
 */
export function createApp(deps: AuthAppDeps): Express {
  const accounts = new AccountsRepository(deps.models.accounts);
  const login = new LoginService(deps.verifyIdToken, accounts);
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics,
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    publicRoutes: (app) => app.use(loginRouter(login)),
    routes: (app) => app.use(accountsRouter(accounts)),
  });
}
