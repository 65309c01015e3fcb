import { Router, type Request } from 'express';
import { accountIdOf, REQUEST_ID_HEADER, validate } from '@platform/shared';
import type { DeploymentsService, Target } from './deployments.service';
import type { Caller } from './projects.client';
import {
  IDEMPOTENCY_KEY_HEADER,
  deploymentListQuery,
  idempotencyHeaders,
  toDeploymentResponse,
  toListItem,
  triggerBody,
} from './deployments.schemas';

export const DEPLOYMENTS_PATH = '/api/projects/:projectId/services/:serviceId/deployments';

type DeploymentsRequest = Request<{ projectId: string; serviceId: string; deploymentId?: string }>;

const callerOf = (req: Request): Caller => ({
  accountId: accountIdOf(req),
  requestId: req.get(REQUEST_ID_HEADER),
});

const targetOf = (req: DeploymentsRequest): Target => ({
  projectId: req.params.projectId,
  serviceId: req.params.serviceId,
});

export function deploymentsRouter(service: DeploymentsService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req: DeploymentsRequest, res) => {
    // The ownership check runs inside, alongside the reads (see listDeployments).
    const page = await service.listDeployments(callerOf(req), targetOf(req), () =>
      validate(deploymentListQuery, req.query),
    );
    res.json({
      deployments: page.items.map(toListItem),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    });
  });

  router.post('/', async (req: DeploymentsRequest, res) => {
    const ref = await service.authorizeService(callerOf(req), targetOf(req));
    const input = validate(triggerBody, req.body);
    const headers = validate(idempotencyHeaders, {
      [IDEMPOTENCY_KEY_HEADER]: req.get(IDEMPOTENCY_KEY_HEADER),
    });
    const result = await service.triggerDeployment(ref, input, headers[IDEMPOTENCY_KEY_HEADER]);
    res.status(result.status).json(result.body);
  });

  router.get('/:deploymentId', async (req: DeploymentsRequest, res) => {
    const ref = await service.authorizeService(callerOf(req), targetOf(req));
    const deployment = await service.getDeployment(ref, req.params.deploymentId!);
    res.json(toDeploymentResponse(deployment));
  });

  router.post('/:deploymentId/cancel', async (req: DeploymentsRequest, res) => {
    const ref = await service.authorizeService(callerOf(req), targetOf(req));
    const deployment = await service.cancelDeployment(ref, req.params.deploymentId!);
    res.json(toDeploymentResponse(deployment));
  });

  return router;
}
