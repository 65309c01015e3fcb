import type { Agent, ClientRequest } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware, fixRequestBody } from 'http-proxy-middleware';
import {
  IDENTITY_HEADER,
  REQUEST_ID_HEADER,
  serviceUnavailable,
  signIdentity,
  type Logger,
} from '@platform/shared';
import { upstreamFor, type Upstream } from './upstreams';

export interface ServiceProxyOptions {
  upstreams: Record<Upstream, string>;
  /** Keep-alive agent shared by every proxied request. */
  agent: Agent;
  internalSecret: string;
  timeoutMs: number;
  /** Requests in flight to each upstream at most; the others wait, first come first served. */
  concurrency: number;
  logger: Logger;
  /** Aborted as the gateway shuts down: the log streams it holds open are ended then. */
  stopping?: AbortSignal;
}

/** Headers a client may send but a service must only ever get from the gateway. */
function isClientOnlyHeader(name: string): boolean {
  return (
    name === IDENTITY_HEADER ||
    name === 'cookie' ||
    name === 'forwarded' ||
    name.startsWith('x-forwarded-')
  );
}

/**
 * What a service receives: the client's request minus its cookies, forwarding claims and any
 * identity it made up; plus the identity of the session's account, signed for the upstream and
 * for the method and path as sent (`proxyReq.path`: what the service reads as `req.originalUrl`,
 * after any rewriting by the proxy, e.g. `//` collapsed), and the request id.
 */
function prepareUpstreamRequest(proxyReq: ClientRequest, req: Request, secret: string): void {
  for (const name of proxyReq.getHeaderNames()) {
    if (isClientOnlyHeader(name)) proxyReq.removeHeader(name);
  }
  const target = { aud: upstreamFor(req.path)!, method: proxyReq.method, path: proxyReq.path };
  proxyReq.setHeader(IDENTITY_HEADER, signIdentity(req.accountId!, target, secret));
  proxyReq.setHeader(REQUEST_ID_HEADER, String(req.headers[REQUEST_ID_HEADER]));
  if (req.body !== undefined) {
    // The gateway parsed (and size-checked) the JSON body: send it again, with its new length.
    proxyReq.removeHeader('transfer-encoding');
    fixRequestBody(proxyReq, req);
  }
}

/** The proxy to the services, giving up on an answer after `timeoutMs`. */
function createServiceProxy(options: ServiceProxyOptions, timeoutMs: number) {
  return createProxyMiddleware<Request, Response>({
    pathFilter: (path) => upstreamFor(path) !== undefined,
    router: (req) => options.upstreams[upstreamFor(req.path)!],
    changeOrigin: true,
    xfwd: false,
    agent: options.agent,
    proxyTimeout: timeoutMs,
    on: {
      proxyReq: (proxyReq, req) => prepareUpstreamRequest(proxyReq, req, options.internalSecret),
      proxyRes: (proxyRes) => {
        // Only the gateway sets cookies on its origin.
        delete proxyRes.headers['set-cookie'];
      },
      error: (err, req, res) => {
        const upstream = upstreamFor((req as Request).path);
        options.logger.warn(
          {
            upstream,
            code: (err as NodeJS.ErrnoException).code,
            reqId: req.headers[REQUEST_ID_HEADER],
          },
          'upstream did not answer',
        );
        if (!('status' in res) || res.headersSent) {
          res.destroy();
          return;
        }
        const error = serviceUnavailable(
          `The ${upstream ?? 'upstream'} service is unavailable: retry shortly.`,
        );
        res.status(error.status).json(error.toBody());
      },
    },
  });
}

/**
 * The longest a request may wait in a service by asking to (`GET …/deployments/:id?wait=N`, N at
 * most 300 s), plus room for the service's own answer.
 */
export const LONG_POLL_TIMEOUT_MS = 330_000;

/** A request that asks to be held by the service: it waits out of turn and past the timeout. */
const isLongPoll = (req: Request) => req.method === 'GET' && req.query.wait !== undefined;

/**
 * A deployment's live log (`GET …/deployments/:id/logs` as Server-Sent Events): open for as long
 * as the deployment runs, its events passed on as they come (the proxy pipes them, nothing is
 * buffered), its idle time bounded by the service's heartbeat comments, not by a proxy timeout.
 */
const isEventStream = (req: Request) =>
  req.method === 'GET' &&
  /\/logs\/?$/.test(req.path) &&
  (req.get('accept') ?? '').includes('text/event-stream');

/**
 * Proxies /api paths to their service (behind requireSession). Service answers, errors
 * included, pass through unchanged; a service that refuses, drops or outlasts `timeoutMs` is a
 * JSON 503 (a request that asks to wait, `?wait=`, or a log stream gets LONG_POLL_TIMEOUT_MS and
 * no turn).
 * Unrouted paths fall through to the 404 handler.
 */
export function serviceProxy(options: ServiceProxyOptions): RequestHandler {
  const proxy = createServiceProxy(options, options.timeoutMs);
  const longPoll = createServiceProxy(options, Math.max(options.timeoutMs, LONG_POLL_TIMEOUT_MS));
  const turns = new Map<Upstream, Turns>();
  // Open log streams: ended at shutdown, so the server's close need not wait for them.
  const streams = new Set<Response>();
  options.stopping?.addEventListener(
    'abort',
    () => {
      for (const res of streams) res.destroy();
    },
    { once: true },
  );
  return (req, res, next) => {
    const upstream = upstreamFor(req.path);
    if (!upstream) return next();
    // Held requests would otherwise fill the turns and starve everyone else's.
    if (isLongPoll(req)) return void longPoll(req, res, next);
    if (isEventStream(req)) {
      streams.add(res);
      res.once('close', () => streams.delete(res));
      return void longPoll(req, res, next);
    }
    let upstreamTurns = turns.get(upstream);
    if (!upstreamTurns) turns.set(upstream, (upstreamTurns = new Turns(options.concurrency)));
    upstreamTurns.take(res, () => void proxy(req, res, next));
  };
}

/**
 * At most `limit` responses under way; the next waits until one finishes (or its client goes).
 * Limiting requests, not the agent's sockets: http-proxy edits a request's headers and body when
 * it gets its socket, too late for one that waited in the agent's queue.
 */
class Turns {
  private active = 0;
  private readonly waiting: { res: Response; start: () => void }[] = [];

  constructor(private readonly limit: number) {}

  take(res: Response, start: () => void): void {
    if (this.active < this.limit) {
      this.begin(res, start);
      return;
    }
    this.waiting.push({ res, start });
  }

  private begin(res: Response, start: () => void) {
    this.active++;
    res.once('close', () => {
      this.active--;
      this.next();
    });
    start();
  }

  private next() {
    while (this.active < this.limit && this.waiting.length > 0) {
      const { res, start } = this.waiting.shift()!;
      // A client that left while waiting needs no turn.
      if (!res.destroyed && !res.writableEnded) this.begin(res, start);
    }
  }
}
