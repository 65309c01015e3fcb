import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { httpLogger } from '../logger';
import { jsonBody, requireJsonBody } from './body';
import { errorHandler, notFoundHandler } from './error-handler';
import { healthRouter, type ReadinessCheck } from './health';
import { requireIdentity } from './identity';
import type { Metrics } from './metrics';

export interface ServiceAppOptions {
  logger: Logger;
  metrics: Metrics;
  readiness: Record<string, ReadinessCheck>;
  /** Verifies the internal identity header on every route but health and metrics. */
  internalSecret: string;
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
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(httpLogger(options.logger));
  app.use(options.metrics.middleware);
  app.use(healthRouter(options.readiness));
  app.get('/metrics', options.metrics.handler);
  options.publicRoutes?.(app);
  app.use(requireIdentity(options.internalSecret));
  app.use(requireJsonBody, jsonBody());
  options.routes(app);
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}
