import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { rateLimited, serviceUnavailable } from '@platform/shared';

// Fixed windows, one counter per key: the first hit creates the counter with its window
// (ARGV[i], ms) as expiry; one script, so each INCR and its PEXPIRE are atomic (a crash between
// them cannot leave a counter forever). Answers count and remaining ms for each key in turn.
const FIXED_WINDOWS_SCRIPT = `
local result = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local remaining = redis.call('PTTL', key)
  if count == 1 or remaining < 0 then
    redis.call('PEXPIRE', key, ARGV[i])
    remaining = tonumber(ARGV[i])
  end
  result[#result + 1] = count
  result[#result + 1] = remaining
end
return result
`;
const COMMAND = 'gatewayFixedWindows';

type FixedWindowsClient = Redis & {
  [COMMAND](keyCount: number, ...keysThenWindowsMs: (string | number)[]): Promise<number[]>;
};

/** The script as a command of this client: sent once per connection, then by its SHA1. */
function fixedWindowsClient(redis: Redis): FixedWindowsClient {
  if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { lua: FIXED_WINDOWS_SCRIPT });
  return redis as FixedWindowsClient;
}

export const RATE_WINDOW_MS = 60_000;

/**
 * One limit: at most `limit` requests of a client in each window. `T` is what the client is read
 * from: the request, for the middleware; for a limiter called from a handler, whatever it knows
 * by then (the account a login verified).
 */
export interface RateLimitRule<T = Request> {
  /** e.g. `gateway:rl:ip:` — the client key is appended. */
  keyPrefix: string;
  limit: number;
  windowMs?: number;
  /** The client a request counts against; undefined = not limited by this rule. */
  keyOf: (subject: T) => string | undefined;
}

interface CountedWindow {
  limit: number;
  count: number;
  /** Until the window's counter expires. */
  resetMs: number;
}

/** Every window a request was counted in so far (several limiters may count one request). */
const countedWindows = new WeakMap<Response, CountedWindow[]>();

/**
 * Counts a request against every rule whose client it has (in one Redis call): 429 RATE_LIMITED
 * with Retry-After once it goes past the `limit` of any of them in its window; 503 when Redis is
 * down. The RateLimit header fields describe the most constrained of all the windows the request
 * was counted in, by this limiter and any before it.
 */
export function rateLimiter<T>(options: {
  redis: Redis;
  rules: RateLimitRule<T>[];
}): (subject: T, res: Response) => Promise<void> {
  const redis = fixedWindowsClient(options.redis);
  return async (subject, res) => {
    const applied = options.rules.flatMap((rule) => {
      const client = rule.keyOf(subject);
      return client === undefined ? [] : [{ rule, key: `${rule.keyPrefix}${client}` }];
    });
    if (applied.length === 0) return;
    let counts: number[];
    try {
      counts = await redis[COMMAND](
        applied.length,
        ...applied.map(({ key }) => key),
        ...applied.map(({ rule }) => rule.windowMs ?? RATE_WINDOW_MS),
      );
    } catch {
      throw serviceUnavailable('Sessions are unavailable: retry shortly.');
    }
    const windows = applied.map(({ rule }, i) => ({
      limit: rule.limit,
      count: counts[2 * i]!,
      resetMs: counts[2 * i + 1]!,
    }));
    const all = [...(countedWindows.get(res) ?? []), ...windows];
    countedWindows.set(res, all);
    setRateLimitHeaders(res, all);
    // Past several limits, the client waits for the last of their windows to end.
    const exceeded = windows.filter((w) => w.count > w.limit);
    if (exceeded.length > 0) throw rateLimited(Math.max(...exceeded.map((w) => w.resetMs)) / 1000);
  };
}

/** rateLimiter as middleware: every applicable rule counts the request before it goes on. */
export function rateLimit(options: { redis: Redis; rules: RateLimitRule[] }): RequestHandler {
  const limiter = rateLimiter(options);
  return async (req, res, next) => {
    await limiter(req, res);
    next();
  };
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers, the separate-field
 * form) of the limit that applies: the one with the fewest requests left, and of those the one
 * that resets last (contracts.md, Rate-limit headers).
 */
function setRateLimitHeaders(res: Response, windows: CountedWindow[]): void {
  const remainingOf = (w: CountedWindow) => Math.max(0, w.limit - w.count);
  const applies = windows.reduce((a, b) =>
    remainingOf(b) < remainingOf(a) || (remainingOf(b) === remainingOf(a) && b.resetMs > a.resetMs)
      ? b
      : a,
  );
  res.set({
    'RateLimit-Limit': String(applies.limit),
    'RateLimit-Remaining': String(remainingOf(applies)),
    'RateLimit-Reset': String(Math.max(1, Math.ceil(applies.resetMs / 1000))),
  });
}

/**
 * The client a per-address limit counts: an IPv4 address, or the /64 network of an IPv6 one. A
 * host is usually given a whole /64, so counting single IPv6 addresses would let it step past
 * the limit by changing address (contracts.md, Trust). An IPv4-mapped address is its IPv4.
 */
export const clientIp = (req: Request) =>
  clientNetwork(req.ip ?? req.socket.remoteAddress ?? 'unknown');

export function clientNetwork(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The logged-in account of the request's session (the session middleware has run). */
export const sessionAccount = (req: Request) => req.session?.accountId || undefined;

/** Sessions are counted under a digest of their id, so the key does not spell a live session id. */
export const sessionDigest = (req: Request) =>
  req.session?.accountId
    ? createHash('sha256').update(req.sessionID).digest('base64url').slice(0, 22)
    : undefined;
