import express, { type Express } from 'express';
import type { Connection } from 'mongoose';
import type { Logger } from 'pino';
import { httpLogger } from '../logger';
import { pingMongo } from '../mongo';
import { jsonBody, requireJsonBody } from './body';
import { errorHandler, notFoundHandler } from './error-handler';
import { healthRouter } from './health';
import { requireIdentity, type ServiceName } from './identity';
import { createMetrics } from './metrics';

/** What every service's `createApp(deps)` receives from its compose.ts, besides its own parts. */
export interface ServiceAppDeps {
  logger: Logger;
  /**
   * Verifies the internal identity header on every route but health and metrics: made for this
   * service, this request's method and path, within 60 s.
   */
  internalSecret: string;
  /** The service's own database: `/readyz` answers 200 only while it answers a ping. */
  connection: Connection;
}

export interface ServiceAppOptions extends ServiceAppDeps {
  /**
   * The service's name: it labels the metrics, and an identity header is accepted only when made
   * for this service (its audience).
   */
  name: ServiceName;
  /** Mounts the service's own routers; they see `accountIdOf(req)`. */
  routes: (app: Express) => void;
  /**
   * Routes mounted before the identity check. Only for a route that is itself the
   * authentication (auth's login callback, docs/architecture.md); everything else is `routes`.
   */
  publicRoutes?: (app: Express) => void;
}

/**
 * The express app every backend service shares: request ids and logs, metrics, health,
 * the internal identity, JSON bodies, the service's routes, then JSON 404 and errors.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const metrics = createMetrics(options.name);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(httpLogger(options.logger));
  app.use(metrics.middleware);
  app.use(healthRouter({ mongo: () => pingMongo(options.connection) }));
  app.get('/metrics', metrics.handler);
  options.publicRoutes?.(app);
  app.use(requireIdentity(options.internalSecret, options.name));
  app.use(requireJsonBody, jsonBody());
  options.routes(app);
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}
