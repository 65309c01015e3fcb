import express, { type Express } from 'express';
import {
  errorHandler,
  healthRouter,
  httpLogger,
  notFoundHandler,
  type Logger,
} from '@platform/shared';
import { certsRouter } from './certs/certs.routes';
import { signInRouter } from './sign-in/sign-in.routes';
import { tokenRouter } from './token/token.routes';
import type { SigningKey } from './tokens';

export interface DevIdpDeps {
  logger: Logger;
  key: SigningKey;
  /** The `aud` of minted tokens. */
  clientId: string;
}

/** The development identity provider: certificates, token minting and the sign-in page. */
export function createApp({ logger, key, clientId }: DevIdpDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpLogger(logger));
  app.use(healthRouter({}));
  app.use(certsRouter(key));
  app.use(tokenRouter(key, clientId));
  app.use(signInRouter());
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
