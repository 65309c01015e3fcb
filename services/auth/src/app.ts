import express, { type Express } from 'express';
import type { Connection } from 'mongoose';
import {
  errorHandler,
  healthRouter,
  httpLogger,
  jsonBody,
  notFoundHandler,
  pingMongo,
  requireIdentity,
  requireJsonBody,
  type Logger,
  type Metrics,
} from '@platform/shared';
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
 * createServiceApp's sequence with one addition: the login callback is mounted before the
 * identity check, because it is itself the authentication and the gateway cannot know the
 * account before it (docs/architecture.md). createServiceApp mounts every route after
 * requireIdentity, so this repeats its steps with the same shared pieces in the same order;
 * with a `publicRoutes` option in createServiceApp (proposed to libs/shared) it becomes one call.
 */
export function createApp(deps: AuthAppDeps): Express {
  const accounts = accountsRepository(deps.connection);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(httpLogger(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(healthRouter({ mongo: () => pingMongo(deps.connection) }));
  app.get('/metrics', deps.metrics.handler);
  app.use(loginRouter({ verifyIdToken: deps.verifyIdToken, accounts }));
  app.use(requireIdentity(deps.internalSecret));
  app.use(requireJsonBody, jsonBody());
  app.use(accountsRouter(accounts));
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
