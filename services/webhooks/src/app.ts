import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createInternalClient,
  createMetrics,
  createServiceApp,
  pingMongo,
  requireOwnership,
  type Logger,
} from '@platform/shared';
import type { Config } from './config';
import { deliveriesRouter } from './deliveries/deliveries.routes';
import type { DeliveriesService } from './deliveries/deliveries.service';
import { webhooksRouter } from './webhooks/webhooks.routes';
import type { WebhooksService } from './webhooks/webhooks.service';

export interface AppDeps {
  config: Pick<Config, 'INTERNAL_SECRET' | 'PROJECTS_URL'>;
  logger: Logger;
  /** Readiness pings it. */
  connection: Connection;
  webhooks: WebhooksService;
  deliveries: DeliveriesService;
}

/**
 * The HTTP API (no listen), as compose.ts builds it: every route is under a project that the
 * projects service says the caller owns, asked on each request.
 */
export function createApp({ config, logger, connection, webhooks, deliveries }: AppDeps): Express {
  const projects = createInternalClient({
    baseUrl: config.PROJECTS_URL,
    internalSecret: config.INTERNAL_SECRET,
  });
  return createServiceApp({
    logger,
    metrics: createMetrics('webhooks'),
    readiness: { mongo: () => pingMongo(connection) },
    internalSecret: config.INTERNAL_SECRET,
    routes: (app) => {
      app.use(
        '/api/projects/:projectId/webhooks',
        requireOwnership(projects, 'project'),
        webhooksRouter(webhooks, deliveries),
        deliveriesRouter(webhooks, deliveries),
      );
    },
  });
}
