import type { Express } from 'express';
import type { Connection } from 'mongoose';
import { createMetrics, createServiceApp, pingMongo, type Logger } from '@platform/shared';
import type { AccountsRepository } from './accounts/accounts.repository';
import { accountsRouter } from './accounts/accounts.routes';
import { loginRouter } from './login/login.routes';
import type { LoginService } from './login/login.service';

export interface AppDeps {
  logger: Logger;
  internalSecret: string;
  /** Readiness pings it. */
  connection: Connection;
  accounts: AccountsRepository;
  login: LoginService;
}

/**
 * The auth service's HTTP app, as compose.ts builds it. The login callback is a public route: it
 * is itself the authentication, and the gateway cannot know the account before it
 * (docs/architecture.md). Everything else needs the identity.
 */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: createMetrics('auth'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    publicRoutes: (app) => app.use(loginRouter(deps.login)),
    routes: (app) => app.use(accountsRouter(deps.accounts)),
  });
}
