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
import { Gauge, type Registry } from 'prom-client';
import { upstreamFor, type Upstream } from './upstreams';

export interface ServiceProxyOptions {
  upstreams: Record<Upstream, string>;
  /** Keep-alive agent shared by every proxied request. */
  agent: Agent;
  internalSecret: string;
  timeoutMs: number;
  /** Requests in flight to each upstream at most; the others wait, first come first served. */
  concurrency: number;
  /** Requests waiting for each upstream at most; one more is 503 with Retry-After. */
  queueLimit: number;
  /** Where the gateway's metrics are kept: the waiting requests per upstream are a gauge there. */
  registry: Registry;
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
  new Gauge({
    name: 'gateway_upstream_waiting_requests',
    help: 'Requests waiting in the gateway for a turn at their upstream service',
    labelNames: ['upstream'],
    registers: [options.registry],
    collect() {
      for (const [upstream, upstreamTurns] of turns) this.set({ upstream }, upstreamTurns.waiting);
    },
  });
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
    if (!upstreamTurns) {
      upstreamTurns = new Turns(options.concurrency, options.queueLimit);
      turns.set(upstream, upstreamTurns);
    }
    if (!upstreamTurns.take(res, () => void proxy(req, res, next))) {
      next(
        serviceUnavailable(`The ${upstream} service is busy: retry shortly.`, QUEUE_FULL_RETRY_S),
      );
    }
  };
}

interface Waiter {
  res: Response;
  start: () => void;
  leave: () => void;
}

/** Retry-After of a request refused because its upstream's queue is full: turns end quickly. */
const QUEUE_FULL_RETRY_S = 1;

/**
 * At most `limit` responses under way; the next wait, first come first served, at most
 * `queueLimit` of them (`take` refuses one more). A waiting request whose client goes leaves the
 * queue at once, so it never takes a turn or a place in the queue.
 * Limiting requests, not the agent's sockets: http-proxy edits a request's headers and body when
 * it gets its socket, too late for one that waited in the agent's queue.
 */
class Turns {
  private active = 0;
  // A Set keeps insertion order (first come first served) and lets a leaving client out in O(1).
  private readonly queue = new Set<Waiter>();

  constructor(
    private readonly limit: number,
    private readonly queueLimit: number,
  ) {}

  get waiting(): number {
    return this.queue.size;
  }

  /** Starts the request now or queues it; false when the queue is full (nothing started). */
  take(res: Response, start: () => void): boolean {
    if (this.active < this.limit) {
      this.begin(res, start);
      return true;
    }
    if (this.queue.size >= this.queueLimit) return false;
    const waiter: Waiter = { res, start, leave: () => this.queue.delete(waiter) };
    res.once('close', waiter.leave);
    this.queue.add(waiter);
    return true;
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
    for (const waiter of this.queue) {
      if (this.active >= this.limit) return;
      this.queue.delete(waiter);
      waiter.res.off('close', waiter.leave);
      this.begin(waiter.res, waiter.start);
    }
  }
}
