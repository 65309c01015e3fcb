import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Request } from 'express';
import { unauthorized } from '../errors';

/**
 * The internal identity header: the gateway (or a service calling another) states which account
 * a request acts for, and for which request: `v2.<payload>.<signature>`, base64url, HMAC-SHA256
 * with INTERNAL_SECRET over `v2.<payload>`. The payload is `{sub, aud, method, path, iat, exp}`:
 * the account, the service the request is sent to (its `createServiceApp` name), the request's
 * method and its target as the service receives it (`req.originalUrl`: path and query string),
 * living at most IDENTITY_TTL_SECONDS. A service accepts only one made for itself and for the
 * request it comes with, so a header seen on one request (in a log, by another service) opens
 * nothing else, and a service port reached directly gives nothing away.
 */
export const IDENTITY_HEADER = 'x-platform-identity';
/** How long a signed identity lives; a longer-lived one is refused (contracts.md: at most 60 s). */
export const IDENTITY_TTL_SECONDS = 60;
const CLOCK_SKEW_SECONDS = 30;
const VERSION = 'v2';

/** The backend services: an identity's audience, the name each gives `createServiceApp`. */
export type ServiceName = 'auth' | 'projects' | 'deployments' | 'webhooks';

/** The request an identity is for. */
export interface IdentityTarget {
  /** The service that receives it. */
  aud: ServiceName;
  /** Upper case, as sent. */
  method: string;
  /**
   * The request target as sent and as the service reads it (`req.originalUrl`): the path with
   * its query string, exactly, with no normalising on either end (docs/architecture.md).
   */
  path: string;
}

interface IdentityPayload extends IdentityTarget {
  sub: string;
  iat: number;
  exp: number;
}

const sign = (data: string, secret: string) =>
  createHmac('sha256', secret).update(data).digest('base64url');

/** The identity header for one request of `accountId` to `target`, valid for 60 s from now. */
export function signIdentity(
  accountId: string,
  target: IdentityTarget,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const payload: IdentityPayload = {
    sub: accountId,
    aud: target.aud,
    method: target.method.toUpperCase(),
    path: target.path,
    iat: nowSeconds,
    exp: nowSeconds + IDENTITY_TTL_SECONDS,
  };
  const data = `${VERSION}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${data}.${sign(data, secret)}`;
}

/**
 * Returns the account id, or null when the header is missing, tampered with, of another version,
 * expired (or made to live longer than 60 s), or made for another service, method or path.
 */
export function verifyIdentity(
  header: string | undefined,
  secret: string,
  expected: IdentityTarget,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  if (!header) return null;
  const parts = header.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return null;
  const computed = Buffer.from(sign(`${parts[0]}.${parts[1]}`, secret));
  const given = Buffer.from(parts[2] ?? '');
  if (given.length !== computed.length || !timingSafeEqual(given, computed)) return null;
  let payload: Partial<IdentityPayload>;
  try {
    payload = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof payload.sub !== 'string' || !payload.sub) return null;
  if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number') return null;
  if (payload.exp < nowSeconds || payload.iat > nowSeconds + CLOCK_SKEW_SECONDS) return null;
  if (payload.exp - payload.iat > IDENTITY_TTL_SECONDS) return null;
  if (payload.aud !== expected.aud) return null;
  if (payload.method !== expected.method.toUpperCase() || payload.path !== expected.path) {
    return null;
  }
  return payload.sub;
}

/**
 * The account of a request's identity header if it was made for `service` and this request, else
 * null: what `requireIdentity` checks (an express request or a plain node one, as test stubs get).
 */
export function identityOfRequest(
  req: IncomingMessage & { originalUrl?: string },
  secret: string,
  service: ServiceName,
): string | null {
  const header = req.headers[IDENTITY_HEADER];
  return verifyIdentity(typeof header === 'string' ? header : undefined, secret, {
    aud: service,
    method: req.method ?? '',
    path: req.originalUrl ?? req.url ?? '',
  });
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The account the request acts for, set by requireIdentity. */
    accountId?: string;
  }
}

/**
 * Every route mounted after this one needs a valid identity header made for `service` and for
 * this very request (method and path); 401 otherwise.
 */
export function requireIdentity(secret: string, service: ServiceName): RequestHandler {
  return (req, _res, next) => {
    const accountId = identityOfRequest(req, secret, service);
    if (!accountId) {
      next(unauthorized());
      return;
    }
    req.accountId = accountId;
    next();
  };
}

/** The authenticated account of a request that passed requireIdentity. */
export function accountIdOf(req: Request): string {
  if (!req.accountId) throw unauthorized();
  return req.accountId;
}
