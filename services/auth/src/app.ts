import type { Express } from 'express';
import { createServiceApp, type ServiceAppDeps } from '@platform/shared';
import type { AccountsRepository } from './accounts/accounts.repository';
import { accountsRouter } from './accounts/accounts.routes';
import { loginRouter } from './login/login.routes';
import type { LoginService } from './login/login.service';

export interface AppDeps extends ServiceAppDeps {
  accounts: AccountsRepository;
  login: LoginService;
}

/**
 * The auth service's HTTP app, as compose.ts builds it. The login callback is a public route: it
 * is itself the authentication, and the gateway cannot know the account before it
 * (docs/architecture.md). Everything else needs the identity.
 */
export function createApp({ accounts, login, ...deps }: AppDeps): Express {
  return createServiceApp({
    name: 'auth',
    ...deps,
    publicRoutes: (app) => app.use(loginRouter(login)),
    routes: (app) => app.use(accountsRouter(accounts)),
  });
}
