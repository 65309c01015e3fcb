import type { Express, RequestHandler } from 'express';
import { createServiceApp, type ServiceAppDeps } from '@platform/shared';
import { deliveriesRouter } from './deliveries/deliveries.routes';
import type { DeliveriesService } from './deliveries/deliveries.service';
import { webhooksRouter } from './webhooks/webhooks.routes';
import type { WebhooksService } from './webhooks/webhooks.service';

export interface AppDeps extends ServiceAppDeps {
  /** `requireOwnership(projects, 'project')`: the caller must own the path's project. */
  requireProject: RequestHandler;
  webhooks: WebhooksService;
  deliveries: DeliveriesService;
}

/** The webhooks API (no listen), as compose.ts builds it: every route under an owned project. */
export function createApp({ requireProject, webhooks, deliveries, ...deps }: AppDeps): Express {
  return createServiceApp({
    name: 'webhooks',
    ...deps,
    routes: (app) =>
      app.use(
        '/api/projects/:projectId/webhooks',
        requireProject,
        webhooksRouter(webhooks, deliveries),
        deliveriesRouter(webhooks, deliveries),
      ),
  });
}
