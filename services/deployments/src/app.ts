import type { Express, RequestHandler } from 'express';
import { createServiceApp, type ServiceAppDeps } from '@platform/shared';
import { DEPLOYMENTS_PATH, deploymentsRouter } from './deployments/deployments.routes';
import type { DeploymentsService } from './deployments/deployments.service';
import { internalRouter } from './deployments/internal.routes';
import { triggerRouter } from './deployments/trigger.routes';
import type { TriggerService } from './deployments/trigger.service';

export interface AppDeps extends ServiceAppDeps {
  /** `requireOwnership(projects, 'service')`: the caller must own the path's service. */
  requireService: RequestHandler;
  service: DeploymentsService;
  /** Creates deployments: a trigger, a redeploy, a rollback. */
  triggers: TriggerService;
  /** LOG_STREAM_HEARTBEAT: a comment line this often while a log stream is quiet. */
  logStreamHeartbeatMs: number;
}

/**
 * The deployments API (no listen), as compose.ts builds it: every route under a service the
 * caller owns. The creations come first and check that themselves (a trigger's one call to the
 * projects service, for the source, is the check); the others pass `requireService`.
 */
export function createApp({
  requireService,
  service,
  triggers,
  logStreamHeartbeatMs,
  ...deps
}: AppDeps): Express {
  return createServiceApp({
    name: 'deployments',
    ...deps,
    routes: (app) => {
      app.use(DEPLOYMENTS_PATH, triggerRouter(triggers, requireService));
      app.use(
        DEPLOYMENTS_PATH,
        requireService,
        deploymentsRouter(service, { heartbeatMs: logStreamHeartbeatMs }),
      );
      app.use(internalRouter(service));
    },
  });
}
