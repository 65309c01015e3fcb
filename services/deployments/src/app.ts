import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createMetrics,
  createServiceApp,
  pingMongo,
  requireOwnership,
  type InternalClient,
  type Logger,
} from '@platform/shared';
import { DEPLOYMENTS_PATH, deploymentsRouter } from './deployments/deployments.routes';
import type { DeploymentsService } from './deployments/deployments.service';

export interface AppDeps {
  logger: Logger;
  internalSecret: string;
  connection: Connection;
  /** The projects service, asked before every request whether the caller owns the service. */
  projects: InternalClient;
  service: DeploymentsService;
}

export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: createMetrics('deployments'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) =>
      app.use(
        DEPLOYMENTS_PATH,
        requireOwnership(deps.projects, 'service'),
        deploymentsRouter(deps.service),
      ),
  });
}
