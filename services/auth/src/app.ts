import type { Express } from 'express';
import type { Connection } from 'mongoose';
import { createServiceApp, pingMongo, type Logger, type Metrics } from '@platform/shared';
import { accountsRepository } from './accounts/accounts.repository';
import { accountsRouter } from './accounts/accounts.routes';
import type { VerifyGoogleIdToken } from './login/google-id-token';
import { loginRouter } from './login/login.routes';

export interface AuthAppDeps {
  logger: Logger;
  metrics: Metrics;
  connection: Connection;
  internalSecret: string;
  verifyIdToken: VerifyGoogleIdToken;
}

/**
 * The login callback is a public route: it is itself the authentication, and the gateway
 * cannot know the account before it (docs/architecture.md). Everything else needs the identity.
 */
export function createApp(deps: AuthAppDeps): Express {
  const accounts = accountsRepository(deps.connection);
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics,
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    publicRoutes: (app) => app.use(loginRouter({ verifyIdToken: deps.verifyIdToken, accounts })),
    routes: (app) => app.use(accountsRouter(accounts)),
  });
}
