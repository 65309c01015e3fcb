import { Router, type Request } from 'express';
import { REQUEST_ID_HEADER, listResponse, ownedOf, validate } from '@platform/shared';
import type { ServiceRef } from './deployments.repository';
import type { DeploymentsService } from './deployments.service';
import {
  IDEMPOTENCY_KEY_HEADER,
  deploymentListQuery,
  deploymentQuery,
  idempotencyHeaders,
  toDeploymentResponse,
  toListItem,
  triggerBody,
} from './deployments.schemas';
import { sendLogs } from './log-stream.route';

/** Mounted behind `requireOwnership(projects, 'service')` (app.ts): the caller owns the service. */
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

  router.post('/', async (req, res) => {
    const input = validate(triggerBody, req.body);
    const result = await service.triggerDeployment(
      serviceOf(req),
      input,
      idempotencyKeyOf(req),
      req.get(REQUEST_ID_HEADER),
    );
    res.status(result.status).json(result.body);
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

  router.post('/:deploymentId/redeploy', async (req: DeploymentRequest, res) => {
    const result = await service.redeploy(
      serviceOf(req),
      req.params.deploymentId,
      idempotencyKeyOf(req),
      req.get(REQUEST_ID_HEADER),
    );
    res.status(result.status).json(result.body);
  });

  router.post('/:deploymentId/rollback', async (req: DeploymentRequest, res) => {
    const result = await service.rollback(
      serviceOf(req),
      req.params.deploymentId,
      idempotencyKeyOf(req),
    );
    res.status(result.status).json(result.body);
  });

  return router;
}

/** The request's Idempotency-Key (400 when malformed), honoured by every way of creating one. */
function idempotencyKeyOf(req: Request): string | undefined {
  const headers = validate(idempotencyHeaders, {
    [IDEMPOTENCY_KEY_HEADER]: req.get(IDEMPOTENCY_KEY_HEADER),
  });
  return headers[IDEMPOTENCY_KEY_HEADER];
}
