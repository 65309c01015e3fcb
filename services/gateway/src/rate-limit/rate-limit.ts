import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { rateLimited, serviceUnavailable } from '@platform/shared';

// Fixed window: the first hit creates the counter with the window as its expiry; one script,
// so the INCR and the PEXPIRE are atomic (a crash between them cannot leave a counter forever).
const FIXED_WINDOW_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return { count, redis.call('PTTL', KEYS[1]) }
`;

export const RATE_WINDOW_MS = 60_000;

export interface RateLimitOptions {
  redis: Redis;
  /** e.g. `gateway:rl:ip:` — the client key is appended. */
  keyPrefix: string;
  limit: number;
  windowMs?: number;
  /** The client a request counts against; undefined = not limited by this rule. */
  keyOf: (req: Request) => string | undefined;
}

/** 429 RATE_LIMITED with Retry-After past `limit` requests per window; 503 when Redis is down. */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  const windowMs = options.windowMs ?? RATE_WINDOW_MS;
  return async (req, _res, next) => {
    const client = options.keyOf(req);
    if (client === undefined) return next();
    let count: number;
    let remainingMs: number;
    try {
      [count, remainingMs] = (await options.redis.eval(
        FIXED_WINDOW_SCRIPT,
        1,
        `${options.keyPrefix}${client}`,
        windowMs,
      )) as [number, number];
    } catch {
      throw serviceUnavailable('Sessions are unavailable: retry shortly.');
    }
    if (count > options.limit) throw rateLimited(Math.max(remainingMs, 0) / 1000);
    next();
  };
}

export const clientIp = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Sessions are counted under a digest of their id, so the key does not spell a live session id. */
export const sessionDigest = (req: Request) =>
  req.session?.accountId
    ? createHash('sha256').update(req.sessionID).digest('base64url').slice(0, 22)
    : undefined;
