import { Router } from 'express';
import { accountIdOf, notFound } from '@platform/shared';
import type { DeploymentsService } from './deployments.service';

/**
 * What other services ask, for the account of the identity header; never routed by the gateway.
 * The webhooks service checks a status event against the deployment's own record before it signs
 * and sends a webhook of it (contracts.md "Trust inside the platform").
 */
export function internalRouter(service: DeploymentsService): Router {
  const router = Router();

  router.get('/internal/deployments/:deploymentId', async (req, res) => {
    const deployment = await service.findOwned(accountIdOf(req), req.params.deploymentId);
    if (!deployment) throw notFound('Deployment');
    res.json({
      accountId: deployment.accountId,
      projectId: deployment.projectId,
      serviceId: deployment.serviceId,
      deploymentId: deployment.id,
      commitHash: deployment.commitHash,
      status: deployment.status,
    });
  });

  return router;
}
