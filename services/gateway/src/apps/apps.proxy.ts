import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { CSRF_COOKIE, REQUEST_ID_HEADER, type Logger } from '@platform/shared';
import { SECURE_SESSION_COOKIE, SESSION_COOKIE } from '../sessions/sessions';

export interface AppsProxyOptions {
  /** Hosts `<serviceId><hostSuffix>` (port aside) are tenant apps: `.localhost`. */
  hostSuffix: string;
  /** The runtime's router, which forwards by Host to the service's live deployment. */
  routerUrl: string;
  /** Keep-alive agent to the router (destroyed at shutdown by its owner). */
  agent: Agent;
  timeoutMs: number;
  logger: Logger;
}

/** The platform's own cookies: a tenant app never sees them, and cannot set them. */
const PLATFORM_COOKIES = new Set([SESSION_COOKIE, SECURE_SESSION_COOKIE, CSRF_COOKIE]);

const hostnameOf = (host: string | undefined) => host?.replace(/:\d+$/, '').toLowerCase();

/** The service an app host names (`abc123.localhost:8080` → `abc123`), or null. */
export function serviceOfAppHost(host: string | undefined, hostSuffix: string): string | null {
  const hostname = hostnameOf(host);
  if (!hostname?.endsWith(hostSuffix)) return null;
  const label = hostname.slice(0, -hostSuffix.length);
  return /^[a-z0-9][a-z0-9-]{0,62}$/.test(label) ? label : null;
}

const cookieName = (pair: string) => {
  const equals = pair.indexOf('=');
  return (equals < 0 ? pair : pair.slice(0, equals)).trim();
};

/**
 * The Cookie header without the platform's cookies, the others byte for byte as sent;
 * undefined when nothing is left.
 */
function tenantCookies(header: string): string | undefined {
  const kept = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair && !PLATFORM_COOKIES.has(cookieName(pair)));
  return kept.length > 0 ? kept.join('; ') : undefined;
}

/**
 * What the router (and the app behind it) receives: the client's request minus the platform's
 * cookies and every `x-platform-*` header (the signed identity among them), with forwarding
 * headers the gateway vouches for instead of the client's.
 */
function prepareAppRequest(proxyReq: ClientRequest, req: Request): void {
  for (const name of proxyReq.getHeaderNames()) {
    if (name.startsWith('x-platform-') || name === 'forwarded' || name.startsWith('x-forwarded-')) {
      proxyReq.removeHeader(name);
    }
  }
  const cookie = req.headers.cookie && tenantCookies(req.headers.cookie);
  if (cookie) proxyReq.setHeader('cookie', cookie);
  else proxyReq.removeHeader('cookie');
  proxyReq.setHeader('x-forwarded-for', req.ip ?? '');
  proxyReq.setHeader('x-forwarded-host', req.headers.host ?? '');
  proxyReq.setHeader('x-forwarded-proto', req.protocol);
}

/** An app's Set-Cookie headers minus any that would set (or clear) a platform cookie. */
function dropPlatformSetCookies(proxyRes: IncomingMessage): void {
  const setCookies = proxyRes.headers['set-cookie'];
  if (!setCookies) return;
  const kept = setCookies.filter((line) => !PLATFORM_COOKIES.has(cookieName(line)));
  if (kept.length > 0) proxyRes.headers['set-cookie'] = kept;
  else delete proxyRes.headers['set-cookie'];
}

/**
 * Tenant apps at `http://<serviceId><APPS_HOST_SUFFIX>:<gateway port>`: mounted before anything
 * of the platform's own (health, security headers, /api, sessions, limits, CORS), so a request
 * for an app host is the app's, whatever its path, and everything else falls through. Bodies
 * stream both ways unread; answers pass through unchanged; a router that does not answer is a
 * JSON 502.
 */
export function appsProxy(options: AppsProxyOptions): RequestHandler {
  const proxy = createProxyMiddleware<Request, Response>({
    target: options.routerUrl,
    // The router routes by Host: it must get the client's.
    changeOrigin: false,
    xfwd: false,
    agent: options.agent,
    proxyTimeout: options.timeoutMs,
    on: {
      proxyReq: (proxyReq, req) => prepareAppRequest(proxyReq, req),
      proxyRes: (proxyRes) => dropPlatformSetCookies(proxyRes),
      error: (err, req, res) => {
        options.logger.warn(
          { code: (err as NodeJS.ErrnoException).code, reqId: req.headers[REQUEST_ID_HEADER] },
          'the apps router did not answer',
        );
        if (!('writeHead' in res) || res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: 'BAD_GATEWAY',
            message: 'The app is not reachable right now: retry shortly.',
          }),
        );
      },
    },
  });
  return (req, res, next) => {
    if (serviceOfAppHost(req.headers.host, options.hostSuffix)) {
      void proxy(req, res, next);
      return;
    }
    // Under the apps' domain but naming no service (`a.b.<suffix>`, `-x.<suffix>`): nobody's, and
    // never the platform's own pages (a wildcard Ingress sends every such host here).
    if (hostnameOf(req.headers.host)?.endsWith(options.hostSuffix)) {
      res.status(404).json({ error: 'NOT_FOUND', message: 'No app answers at this host.' });
      return;
    }
    next();
  };
}
