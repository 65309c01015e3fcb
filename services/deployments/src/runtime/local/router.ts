import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import type { Logger } from '@platform/shared';
import type { Release } from './release';

/** Headers of one connection, never forwarded (RFC 9110 §7.6.1), plus what names them. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase()),
  );
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)),
  );
}

/**
 * The service a Host names: its first label (`<serviceId>.localhost:8080`,
 * `<serviceId>.apps.example.com`). The gateway forwards only hosts under APPS_HOST_SUFFIX here.
 */
export function serviceIdOfHost(host: string | undefined): string | null {
  const label = host?.split('.', 1)[0]?.toLowerCase();
  return label && /^[a-z0-9][a-z0-9-]*$/.test(label) && host!.includes('.') ? label : null;
}

function answerJson(res: ServerResponse, status: number, body: object) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * The router: forwards each request to the live release of the service its Host names, bodies
 * streamed both ways, over a keep-alive agent per release. Every request counts against the
 * release it went to, so a replaced release is stopped only once it has answered them.
 * No live release: 404 JSON; a release that does not answer: 502 JSON.
 */
export function createRouter(
  liveRelease: (serviceId: string) => Release | undefined,
  logger: Logger,
): RequestListener {
  return (req, res) => {
    const serviceId = serviceIdOfHost(req.headers.host);
    const release = serviceId ? liveRelease(serviceId) : undefined;
    if (!release) {
      answerJson(res, 404, {
        error: 'NOT_FOUND',
        message: serviceId
          ? `No deployment of service ${serviceId} is live.`
          : 'The Host names no service.',
      });
      return;
    }
    release.requestStarted();
    res.once('close', () => release.requestFinished());
    forward(req, res, release, logger, true);
  };
}

function forward(
  req: IncomingMessage,
  res: ServerResponse,
  release: Release,
  logger: Logger,
  mayRetry: boolean,
) {
  const upstream = httpRequest({
    host: release.host,
    port: release.port,
    method: req.method,
    path: req.url,
    headers: endToEnd(req.headers),
    agent: release.agent,
  });
  upstream.on('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
    answer.pipe(res);
    answer.on('error', () => res.destroy());
  });
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    // A kept-alive connection the app closed as this request went out: Node's documented case
    // for one retry (`reusedSocket`), safe for a request without a body.
    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    if (mayRetry && bodyless && upstream.reusedSocket && err.code === 'ECONNRESET') {
      forward(req, res, release, logger, false);
      return;
    }
    logger.debug({ releaseId: release.spec.releaseId, code: err.code }, 'release did not answer');
    if (res.headersSent) res.destroy();
    else
      answerJson(res, 502, {
        error: 'BAD_GATEWAY',
        message: `The live deployment of service ${release.spec.serviceId} did not answer.`,
      });
  });
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  if (req.method === 'GET' || req.method === 'HEAD') upstream.end();
  else req.pipe(upstream);
}
