import { Router, type Request } from 'express';
import { listResponse, ownedOf, validate } from '@platform/shared';
import type { ServiceRef } from './deployment';
import type { DeploymentsService } from './deployments.service';
import {
  deploymentListQuery,
  deploymentQuery,
  logStreamHeaders,
  toDeploymentResponse,
  toListItem,
} from './deployments.schemas';

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

  // contracts.md "Following a deployment": Server-Sent Events with the SSE Accept header, else
  // the whole log so far as text/plain.
  router.get('/:deploymentId/logs', async (req: DeploymentRequest, res) => {
    const ref = serviceOf(req);
    const deployment = await service.findDeployment(ref, req.params.deploymentId);
    if (!(req.get('accept') ?? '').includes('text/event-stream')) {
      res.type('text/plain; charset=utf-8').send(await service.logsOf(ref, deployment.id));
      return;
    }
    const { 'last-event-id': after } = validate(logStreamHeaders, {
      'last-event-id': req.get('last-event-id'),
    });
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
    // Registered before the follow is awaited: a client may leave meanwhile.
    let left = false;
    let stopFollowing: (() => void) | undefined;
    res.once('close', () => {
      left = true;
      clearInterval(heartbeat);
      stopFollowing?.();
    });
    const end = () => {
      clearInterval(heartbeat);
      res.end();
    };
    try {
      stopFollowing = await service.followLogs(deployment.id, after ?? 0, {
        line: (line) =>
          res.write(`id: ${line.n}\nevent: log\ndata: ${line.text.replace(/\r/g, '')}\n\n`),
        status: (status) => res.write(`event: status\ndata: ${JSON.stringify({ status })}\n\n`),
        end,
      });
    } catch (err) {
      clearInterval(heartbeat);
      throw err;
    }
    if (left) stopFollowing();
  });

  router.post('/:deploymentId/cancel', async (req: DeploymentRequest, res) => {
    const deployment = await service.cancelDeployment(serviceOf(req), req.params.deploymentId);
    res.json(toDeploymentResponse(deployment));
  });

  return router;
}
