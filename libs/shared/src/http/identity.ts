import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Request } from 'express';
import { unauthorized } from '../errors';

/**
 * The internal identity header: the gateway (or a service calling another) states which account
 * a request acts for. It is `v1.<payload>.<signature>`, base64url, HMAC-SHA256 with
 * INTERNAL_SECRET, valid for a short time, so a service port reached directly gives nothing away.
 */
export const IDENTITY_HEADER = 'x-platform-identity';
export const IDENTITY_TTL_SECONDS = 60;
const CLOCK_SKEW_SECONDS = 30;

interface IdentityPayload {
  sub: string;
  iat: number;
  exp: number;
}

const sign = (data: string, secret: string) =>
  createHmac('sha256', secret).update(data).digest('base64url');

export function signIdentity(
  accountId: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  ttlSeconds = IDENTITY_TTL_SECONDS,
): string {
  const payload: IdentityPayload = {
    sub: accountId,
    iat: nowSeconds,
    exp: nowSeconds + ttlSeconds,
  };
  const data = `v1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${data}.${sign(data, secret)}`;
}

/** Returns the account id, or null when the header is missing, tampered with or expired. */
export function verifyIdentity(
  header: string | undefined,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  if (!header) return null;
  const parts = header.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1') return null;
  const expected = Buffer.from(sign(`${parts[0]}.${parts[1]}`, secret));
  const given = Buffer.from(parts[2] ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let payload: Partial<IdentityPayload>;
  try {
    payload = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof payload.sub !== 'string' || !payload.sub) return null;
  if (typeof payload.exp !== 'number' || payload.exp < nowSeconds) return null;
  if (typeof payload.iat !== 'number' || payload.iat > nowSeconds + CLOCK_SKEW_SECONDS) return null;
  return payload.sub;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The account the request acts for, set by requireIdentity. */
    accountId?: string;
  }
}

/** Every route mounted after this one needs a valid identity header; 401 otherwise. */
export function requireIdentity(secret: string): RequestHandler {
  return (req, _res, next) => {
    const accountId = verifyIdentity(req.get(IDENTITY_HEADER), secret);
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
