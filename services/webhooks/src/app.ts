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
import { deliveriesRouter } from './deliveries/deliveries.routes';
import type { DeliveriesService } from './deliveries/deliveries.service';
import { webhooksRouter } from './webhooks/webhooks.routes';
import type { WebhooksService } from './webhooks/webhooks.service';

export interface AppDeps {
  logger: Logger;
  connection: Connection;
  internalSecret: string;
  /** The projects service's internal API: who owns which project. */
  projects: InternalClient;
  webhooks: WebhooksService;
  deliveries: DeliveriesService;
}

/** The HTTP API (no listen): every route under a project the caller owns. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: createMetrics('webhooks'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) => {
      app.use(
        '/api/projects/:projectId/webhooks',
        requireOwnership(deps.projects, 'project'),
        webhooksRouter(deps.webhooks, deps.deliveries),
        deliveriesRouter(deps.webhooks, deps.deliveries),
      );
    },
  });
}
