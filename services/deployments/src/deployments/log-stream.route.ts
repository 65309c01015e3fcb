import type { Request, Response } from 'express';
import { validate } from '@platform/shared';
import type { ServiceRef } from './deployments.repository';
import type { DeploymentsService } from './deployments.service';
import { logStreamHeaders } from './deployments.schemas';
import { isFinal } from './status';

/**
 * `GET …/deployments/:deploymentId/logs` (contracts.md "Following a deployment"): Server-Sent
 * Events with the SSE Accept header, else the whole log so far as text/plain. The events are
 * written here, not by an SSE library (docs/architecture.md, Libraries): each line `id: <n>`,
 * `event: log`, `data: <the line>` (one space after the colon, so a client keeps the line's own
 * leading spaces); a status change `event: status` with no id (an id would become the client's
 * Last-Event-ID); a comment every `heartbeatMs` while the stream is open. A reconnect
 * (`Last-Event-ID`) that would get nothing new, the deployment final and no line after the
 * client's last, is 204 No Content: by the HTML standard's rules for server-sent events, the
 * answer that stops a browser's EventSource from reconnecting every 3 s for as long as the page
 * is open.
 */
export async function sendLogs(
  service: DeploymentsService,
  ref: ServiceRef,
  deploymentId: string,
  req: Request,
  res: Response,
  { heartbeatMs }: { heartbeatMs: number },
): Promise<void> {
  const deployment = await service.findDeployment(ref, deploymentId);
  if (!(req.get('accept') ?? '').includes('text/event-stream')) {
    res.type('text/plain; charset=utf-8').send(await service.logsOf(ref, deployment.id));
    return;
  }
  const { 'last-event-id': after } = validate(logStreamHeaders, {
    'last-event-id': req.get('last-event-id'),
  });
  // Read after the status: a final deployment's lines up to it are all in by then.
  const final = isFinal(deployment.status);
  if (after !== undefined && final && (await service.lastLogLine(deployment.id)) <= after) {
    res.status(204).end();
    return;
  }
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
      // The lines of one delivery in one write (and one chunk for the gateway to pass on).
      together: (send) => {
        res.cork();
        send();
        res.uncork();
      },
    });
  } catch (err) {
    clearInterval(heartbeat);
    throw err;
  }
  if (left) stopFollowing();
}
