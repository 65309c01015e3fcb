import type { Express, RequestHandler } from 'express';
import { createServiceApp, type ServiceAppDeps } from '@platform/shared';
import { DEPLOYMENTS_PATH, deploymentsRouter } from './deployments/deployments.routes';
import type { DeploymentsService } from './deployments/deployments.service';
import { internalRouter } from './deployments/internal.routes';

export interface AppDeps extends ServiceAppDeps {
  /** `requireOwnership(projects, 'service')`: the caller must own the path's service. */
  requireService: RequestHandler;
  service: DeploymentsService;
  /** LOG_STREAM_HEARTBEAT: a comment line this often while a log stream is quiet. */
  logStreamHeartbeatMs: number;
}

/** The deployments API (no listen), as compose.ts builds it: every route under an owned service. */
export function createApp({
  requireService,
  service,
  logStreamHeartbeatMs,
  ...deps
}: AppDeps): Express {
  return createServiceApp({
    name: 'deployments',
    ...deps,
    routes: (app) => {
      app.use(
        DEPLOYMENTS_PATH,
        requireService,
        deploymentsRouter(service, { heartbeatMs: logStreamHeartbeatMs }),
      );
      app.use(internalRouter(service));
    },
  });
}
