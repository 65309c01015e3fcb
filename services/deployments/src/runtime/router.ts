import type {
  Agent,
  ClientRequest,
  IncomingHttpHeaders,
  RequestListener,
  ServerResponse,
} from 'node:http';
import { createProxyServer } from 'http-proxy';
import type { Logger } from '@platform/shared';

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

/** The hop-by-hop headers of a message: the list above and those its Connection header names. */
function hopByHop(headers: IncomingHttpHeaders): string[] {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  return Object.keys(headers).filter((name) => HOP_BY_HOP.has(name) || named.includes(name));
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
 * What the router reads of a release: where the next request goes (one of the local runtime's
 * serving copies; a Kubernetes Service), its keep-alive agent, its request count. The local
 * runtime's `Release` (local/release.ts) is one; Kubernetes' is kubernetes/routes.ts'.
 */
export interface RoutedRelease {
  spec: { serviceId: string; releaseId: string };
  agent: Agent;
  requestStarted(): void;
  requestFinished(): void;
  pick(): { host: string; port: number } | undefined;
}

/**
 * The router (the local runtime's supervisor serves it; with Kubernetes, the deployments service
 * does): forwards each request to the live release of the service its Host names (to one of its
 * serving copies, round robin; to its Service), bodies streamed both ways, over a keep-alive agent
 * per release. Every request counts against the release it went to, so a replaced release is
 * stopped only once it has answered them. No live release: 404 JSON; a release that does not
 * answer: 502 JSON.
 */
export function createRouter(
  liveRelease: (serviceId: string) => RoutedRelease | undefined,
  logger: Logger,
): RequestListener {
  // http-proxy streams both bodies and answers with the app's status and headers; the hop-by-hop
  // headers of either side are dropped here (http-proxy passes the client's on).
  const proxy = createProxyServer({ xfwd: false });
  const sent = new WeakMap<object, ClientRequest>();
  proxy.on('proxyReq', (proxyReq, req, res) => {
    for (const name of hopByHop(req.headers)) proxyReq.removeHeader(name);
    sent.set(req, proxyReq);
    // A client that goes before the whole answer ends the app's request too.
    res.once('close', () => {
      if (!res.writableFinished) proxyReq.destroy();
    });
  });
  proxy.on('proxyRes', (proxyRes) => {
    for (const name of hopByHop(proxyRes.headers)) delete proxyRes.headers[name];
  });

  const forward: Forward = (req, res, release, mayRetry) => {
    const copy = release.pick();
    if (!copy) {
      answerJson(res, 502, notAnswered(release));
      return;
    }
    const target = { host: copy.host, port: copy.port };
    proxy.web(req, res, { target, agent: release.agent }, (err: NodeJS.ErrnoException) => {
      // A kept-alive connection the app closed as this request went out: Node's documented case
      // for one retry (`reusedSocket`), safe for a request without a body.
      const bodyless = req.method === 'GET' || req.method === 'HEAD';
      const reused = sent.get(req)?.reusedSocket === true;
      if (mayRetry && bodyless && reused && err.code === 'ECONNRESET' && !res.headersSent) {
        forward(req, res, release, false);
        return;
      }
      logger.debug({ releaseId: release.spec.releaseId, code: err.code }, 'release did not answer');
      if (res.headersSent) res.destroy();
      else answerJson(res, 502, notAnswered(release));
    });
  };

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
    forward(req, res, release, true);
  };
}

const notAnswered = (release: RoutedRelease) => ({
  error: 'BAD_GATEWAY',
  message: `The live deployment of service ${release.spec.serviceId} did not answer.`,
});

type Forward = (
  req: Parameters<RequestListener>[0],
  res: ServerResponse,
  release: RoutedRelease,
  mayRetry: boolean,
) => void;
