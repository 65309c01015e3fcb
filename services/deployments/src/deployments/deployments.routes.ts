import { Router, type Request } from 'express';
import { listResponse, ownedOf, validate } from '@platform/shared';
import type { ServiceRef } from './deployment';
import type { DeploymentsService } from './deployments.service';
import {
  deploymentListQuery,
  deploymentQuery,
  toDeploymentResponse,
  toListItem,
} from './deployments.schemas';
import { sendLogs } from './log-stream.route';

/**
 * Mounted behind `requireOwnership(projects, 'service')` (app.ts): the caller owns the service.
 * The ways to create a deployment are trigger.routes.ts's.
 */
export const DEPLOYMENTS_PATH = '/api/projects/:projectId/services/:serviceId/deployments';

type DeploymentRequest = Request<{ deploymentId: string }>;

/** The service of the path, as the projects service confirmed it the caller's. */
function serviceOf(req: Request): ServiceRef {
  const { accountId, projectId, serviceId } = ownedOf(req);
  return { accountId, projectId, serviceId: serviceId! };
}

export function deploymentsRouter(
  service: DeploymentsService,
  { heartbeatMs }: { heartbeatMs: number },
): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const query = validate(deploymentListQuery, req.query);
    const page = await service.listDeployments(serviceOf(req), query);
    res.json(listResponse('deployments', page, toListItem));
  });

  router.get('/:deploymentId', async (req: DeploymentRequest, res) => {
    const { wait } = validate(deploymentQuery, req.query);
    // A waiting client that leaves frees its wait at once.
    const leaving = new AbortController();
    res.once('close', () => leaving.abort());
    const deployment = await service.getDeployment(
      serviceOf(req),
      req.params.deploymentId,
      wait === undefined ? undefined : { ms: wait * 1000, signal: leaving.signal },
    );
    if (!leaving.signal.aborted) res.json(toDeploymentResponse(deployment));
  });

  router.get('/:deploymentId/logs', (req: DeploymentRequest, res) =>
    sendLogs(service, serviceOf(req), req.params.deploymentId, req, res, { heartbeatMs }),
  );

  router.post('/:deploymentId/cancel', async (req: DeploymentRequest, res) => {
    const deployment = await service.cancelDeployment(serviceOf(req), req.params.deploymentId);
    res.json(toDeploymentResponse(deployment));
  });

  return router;
}
