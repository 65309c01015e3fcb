import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createMetrics,
  createServiceApp,
  pingMongo,
  type InternalClient,
  type Logger,
  type Metrics,
} from '@platform/shared';
import type { Components } from './components';
import { deliveriesRouter } from './deliveries/deliveries.routes';
import { requireProjectAccess } from './projects/project-access';
import { webhooksRouter } from './webhooks/webhooks.routes';

export interface AppDeps {
  logger: Logger;
  connection: Connection;
  internalSecret: string;
  /** The projects service's internal API: who owns which project. */
  projects: InternalClient;
  components: Pick<Components, 'webhooks' | 'deliveries'>;
  metrics?: Metrics;
}

export function createApp(deps: AppDeps): Express {
  const { webhooks, deliveries } = deps.components;
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics ?? createMetrics('webhooks'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) => {
      app.use(
        '/api/projects/:projectId/webhooks',
        requireProjectAccess(deps.projects),
        webhooksRouter(webhooks, deliveries),
        deliveriesRouter(webhooks, deliveries),
      );
    },
  });
}
