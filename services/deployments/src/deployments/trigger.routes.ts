import { Router, type Request, type RequestHandler } from 'express';
import { REQUEST_ID_HEADER, accountIdOf, ownedOf, validate } from '@platform/shared';
import type { ServiceRef } from './deployment';
import {
  IDEMPOTENCY_KEY_HEADER,
  idempotencyHeaders,
  toTriggerResponse,
  triggerBody,
} from './deployments.schemas';
import type { Created, TriggerService } from './trigger.service';

type DeploymentRequest = Request<{ projectId: string; serviceId: string; deploymentId: string }>;

/** The service the path names, for the caller: not yet known to be theirs. */
const requestedService = (req: Request<{ projectId: string; serviceId: string }>): ServiceRef => ({
  accountId: accountIdOf(req),
  projectId: req.params.projectId,
  serviceId: req.params.serviceId,
});

/**
 * The HTTP answer of a creation: 201 with the new deployment (contracts.md); a repeat of an
 * Idempotency-Key's request answers what the first one did, so 201 with the same deployment too.
 */
const CREATED = 201;
const answerOf = (created: Created) => toTriggerResponse(created.deployment);

/**
 * The ways to create a deployment, mounted on DEPLOYMENTS_PATH before the ownership check of
 * the other routes: a trigger and a redeploy ask the projects service once, for the service's
 * source, whose answer (the caller's service, or 404) is the ownership check. A rollback needs no
 * source (it runs a kept one), so it is checked by `requireService` alone.
 */
export function triggerRouter(triggers: TriggerService, requireService: RequestHandler): Router {
  const router = Router({ mergeParams: true });

  router.post('/', async (req: Request<{ projectId: string; serviceId: string }>, res) => {
    // Whose the service is comes first: another account's is 404 whatever the body.
    const owned = await triggers.ownedSource(requestedService(req), req.get(REQUEST_ID_HEADER));
    const input = validate(triggerBody, req.body);
    const created = await triggers.trigger(owned, input, idempotencyKeyOf(req));
    res.status(CREATED).json(answerOf(created));
  });

  router.post('/:deploymentId/redeploy', async (req: DeploymentRequest, res) => {
    const owned = await triggers.ownedSource(requestedService(req), req.get(REQUEST_ID_HEADER));
    const created = await triggers.redeploy(owned, req.params.deploymentId, idempotencyKeyOf(req));
    res.status(CREATED).json(answerOf(created));
  });

  router.post('/:deploymentId/rollback', requireService, async (req: DeploymentRequest, res) => {
    const { accountId, projectId, serviceId } = ownedOf(req);
    const ref = { accountId, projectId, serviceId: serviceId! };
    const created = await triggers.rollback(ref, req.params.deploymentId, idempotencyKeyOf(req));
    res.status(CREATED).json(answerOf(created));
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
