import type { Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis';
import type { Redis } from 'ioredis';
import { serviceUnavailable, unauthorized, type Logger } from '@platform/shared';

declare module 'express-session' {
  interface SessionData {
    accountId: string;
    /** Epoch ms of the login: the start of the absolute lifetime. */
    createdAt: number;
    /** Epoch ms of the last renewal; changing it is what makes express-session save. */
    renewedAt?: number;
  }
}

export const SESSION_COOKIE = 'platform.sid';
/**
 * The name over HTTPS: browsers accept a `__Host-` cookie only when it is Secure, for path `/`
 * and without a Domain, so no sibling subdomain (a tenant app's host among them) can set or
 * shadow it (contracts.md, Trust).
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const sessionCookieName = (secure: boolean) =>
  secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
/** Spec, section 5: a session ends after 7 days of inactivity. */
export const SESSION_IDLE_MS = 7 * 24 * 3600 * 1000;

export interface SessionOptions {
  redis: Redis;
  /** Session keys are `<keyPrefix><session id>`. */
  keyPrefix: string;
  secret: string;
  secureCookie: boolean;
  logger: Logger;
}

const cookieOptions = (secure: boolean) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure,
  path: '/',
});

const sessionsUnavailable = () => serviceUnavailable('Sessions are unavailable: retry shortly.');

/**
 * express-session in Redis. An ordinary request only reads its session: no Redis write, no EXPIRE
 * (connect-redis's touch is off) and no Set-Cookie. The cookie's expiry and the key's TTL
 * (connect-redis derives it from the cookie) move 7 days ahead when the session is saved: at
 * login and when `renewSession` renews it. Nothing is stored before login. A Redis failure is a
 * 503, never a request treated as anonymous.
 */
export function sessions(options: SessionOptions): RequestHandler {
  const middleware = session({
    name: sessionCookieName(options.secureCookie),
    secret: options.secret,
    store: new RedisStore({
      client: options.redis,
      prefix: options.keyPrefix,
      disableTouch: true,
    }),
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: { ...cookieOptions(options.secureCookie), maxAge: SESSION_IDLE_MS },
  });
  return (req, res, next) => {
    middleware(req, res, (err?: unknown) => {
      if (err === undefined) return next();
      options.logger.warn({ err: { message: (err as Error).message } }, 'session store failed');
      next(sessionsUnavailable());
    });
  };
}

/**
 * The 7-day idle rule without a write on every request: once a logged-in session's expiry has
 * fallen more than `renewAfterMs` behind a fresh one, this request pushes the expiry 7 days
 * ahead and marks the session changed, so express-session saves it (SET with the new TTL) and
 * sends the cookie again before the response ends. An active session thus expires between 7
 * days minus `renewAfterMs` and 7 days after its last request. Goes after requireSession.
 */
export function renewSession(options: { renewAfterMs: number }): RequestHandler {
  return (req, _res, next) => {
    const expiresAt = req.session.cookie.expires?.getTime() ?? 0;
    if (Date.now() + SESSION_IDLE_MS - expiresAt > options.renewAfterMs) {
      req.session.touch();
      req.session.renewedAt = Date.now();
    }
    next();
  };
}

function promisify(action: (done: (err?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) =>
    action((err) => (err ? reject(sessionsUnavailable()) : resolve())),
  );
}

/**
 * A fresh session id for a new login (no fixation: any previous session is destroyed), holding
 * the account and the login time, saved before the answer goes out.
 */
export async function startSession(req: Request, accountId: string): Promise<void> {
  await promisify((done) => req.session.regenerate(done));
  req.session.accountId = accountId;
  req.session.createdAt = Date.now();
  await promisify((done) => req.session.save(done));
}

/** Deletes the session in Redis (a replayed cookie finds nothing) and expires the cookie. */
export async function endSession(
  req: Request,
  res: Response,
  secureCookie: boolean,
): Promise<void> {
  await promisify((done) => req.session.destroy(done));
  res.clearCookie(sessionCookieName(secureCookie), cookieOptions(secureCookie));
}

/**
 * Every route after this one needs a logged-in session younger than the absolute lifetime; 401
 * otherwise (an outlived session is destroyed). Sets `req.accountId` for the identity header.
 */
export function requireSession(options: {
  absoluteTtlMs: number;
  secureCookie: boolean;
}): RequestHandler {
  return async (req, res, next) => {
    // express-session skips loading when it believes its store is disconnected.
    if (!req.session) throw sessionsUnavailable();
    const { accountId, createdAt } = req.session;
    if (!accountId) throw unauthorized();
    if (!(typeof createdAt === 'number' && Date.now() - createdAt < options.absoluteTtlMs)) {
      await endSession(req, res, options.secureCookie);
      throw unauthorized('The session has expired: login is required.');
    }
    req.accountId = accountId;
    next();
  };
}
