import { baseEnv, booleanEnv, commaList, durationEnv } from '@platform/shared';
import { z } from 'zod';

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
/** The rate limits' defaults (per minute), which the API document quotes as well. */
export const RATE_LIMIT_DEFAULTS = {
  perSession: 600,
  login: 20,
  deploy: 30,
  webhookTest: 10,
  redeliver: 30,
};
const port = z.coerce.number().int().min(0).max(65535);
// Upstream services are plain HTTP on the internal network (one keep-alive http.Agent).
const serviceUrl = z
  .string()
  .url()
  .regex(/^http:\/\//, 'must be an http:// URL');
/** The window of a per-account operation limit: 1 s to 1 day, default a minute; in ms. */
const rateWindow = durationEnv('1m', { min: '1s', max: '1d' });
const origin = z
  .string()
  .url()
  .transform((url) => new URL(url).origin);

export const configSchema = baseEnv
  .extend({
    /** The gateway's port; PORT is read when GATEWAY_PORT is unset; default 8080. */
    GATEWAY_PORT: port.optional(),
    PORT: port.optional(),
    REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL'),
    /** Prefix of every Redis key the gateway writes (sessions, rate-limit counters). */
    REDIS_PREFIX: z.string().default('gateway:'),
    /** Signs the session cookie. */
    SESSION_SECRET: z.string().min(32, 'must be at least 32 characters'),
    /** No session outlives this, however active (contracts.md: default 30 days); in ms. */
    SESSION_ABSOLUTE_TTL: durationEnv('30d'),
    /**
     * How far an active session's expiry may fall behind a fresh 7-day one before a request
     * renews it (a Redis write and a new cookie); at most 1 day, default 10 minutes; in ms.
     */
    SESSION_RENEW_AFTER: durationEnv('10m', { max: '1d' }),
    /** Secure cookies; always on when NODE_ENV=production. Behind TLS termination, set TRUST_PROXY_HOPS. */
    COOKIE_SECURE: booleanEnv(false),
    /** How many proxies in front of the gateway to trust for the client IP and protocol. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),
    /** The gateway's own public origin, the default allowed Origin. */
    PUBLIC_URL: origin.default('http://localhost:8080'),
    /** Origins allowed on state-changing requests (comma list); default PUBLIC_URL's. */
    ALLOWED_ORIGINS: commaList().pipe(z.array(origin)).optional(),
    AUTH_URL: serviceUrl,
    PROJECTS_URL: serviceUrl,
    DEPLOYMENTS_URL: serviceUrl,
    WEBHOOKS_URL: serviceUrl,
    /**
     * Requests whose Host (port aside) is `<serviceId>` followed by this suffix are a tenant
     * app's: forwarded to RUNTIME_ROUTER_URL before anything else. `.localhost` names resolve
     * to this machine in browsers: `http://<serviceId>.localhost:8080`.
     */
    APPS_HOST_SUFFIX: z
      .string()
      .regex(/^\.[a-z0-9.-]+$/i, 'must start with a dot: .localhost, .apps.example.com')
      .transform((suffix) => suffix.toLowerCase())
      .default('.localhost'),
    /** The router of the deployments' runtime (its RUNTIME_ROUTER_PORT): apps are behind it. */
    RUNTIME_ROUTER_URL: serviceUrl.default('http://127.0.0.1:4020'),
    /** An app's answer may pause this long (a stream, a slow page) before the gateway cuts it. */
    APPS_IDLE_TIMEOUT: durationEnv('5m'),
    /** The OAuth client id of the dashboard's Google sign-in button (where dev-idp is not used). */
    GOOGLE_CLIENT_ID: z.string().min(1).optional(),
    /** dev-idp, proxied at /dev/ when NODE_ENV is not production. */
    DEV_IDP_URL: serviceUrl.optional(),
    /** Requests per minute per session. */
    RATE_LIMIT_PER_MINUTE: count(RATE_LIMIT_DEFAULTS.perSession),
    /**
     * Requests per minute per account, all its sessions and its logins together (signing in
     * again does not start a fresh count); default RATE_LIMIT_PER_MINUTE.
     */
    ACCOUNT_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).optional(),
    /** Requests per minute per client IP, sessions or not; default twice RATE_LIMIT_PER_MINUTE. */
    IP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).optional(),
    /**
     * Login attempts per minute per client IP (before auth is asked), and logins per minute per
     * account (once auth has verified the credential, before the session starts).
     */
    LOGIN_RATE_LIMIT_PER_MINUTE: count(RATE_LIMIT_DEFAULTS.login),
    /**
     * Deployments an account may start per DEPLOY_RATE_WINDOW: triggers, redeploys and rollbacks
     * together, each a build or a start on the runtime.
     */
    DEPLOY_RATE_LIMIT: count(RATE_LIMIT_DEFAULTS.deploy),
    /** Its window: a duration (`30s`, `1m`, `1h`), default `1m`. */
    DEPLOY_RATE_WINDOW: rateWindow,
    /** Webhook test sends per account per WEBHOOK_TEST_RATE_WINDOW (each an outgoing request). */
    WEBHOOK_TEST_RATE_LIMIT: count(RATE_LIMIT_DEFAULTS.webhookTest),
    /** Its window: a duration (`30s`, `1m`, `1h`), default `1m`. */
    WEBHOOK_TEST_RATE_WINDOW: rateWindow,
    /** Redeliveries per account per REDELIVER_RATE_WINDOW (each an outgoing request). */
    REDELIVER_RATE_LIMIT: count(RATE_LIMIT_DEFAULTS.redeliver),
    /** Its window: a duration (`30s`, `1m`, `1h`), default `1m`. */
    REDELIVER_RATE_WINDOW: rateWindow,
    /** How long an upstream service may take to answer before the request is 503. */
    UPSTREAM_TIMEOUT_MS: count(30_000),
    /**
     * Requests in flight to each upstream service at most; more wait in the gateway, in order,
     * instead of opening a connection each (1,000 clients at once would otherwise open 1,000
     * connections to one service and overflow its listen queue).
     */
    UPSTREAM_CONCURRENCY: count(128),
    /**
     * Requests waiting for a turn at each upstream service at most; one more is 503
     * SERVICE_UNAVAILABLE with Retry-After. Generous: a burst of a few thousand clients waits
     * rather than fails; the bound keeps an endless one from growing the gateway's memory.
     */
    UPSTREAM_QUEUE_LIMIT: z.coerce.number().int().min(0).default(4096),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === 'production' && env.DEV_IDP_URL !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['DEV_IDP_URL'],
        message:
          'must not be set in production: the development identity provider signs for anyone',
      });
    }
  })
  .transform(
    ({
      GATEWAY_PORT,
      PORT,
      ALLOWED_ORIGINS,
      COOKIE_SECURE,
      IP_RATE_LIMIT_PER_MINUTE,
      ACCOUNT_RATE_LIMIT_PER_MINUTE,
      ...env
    }) => ({
      ...env,
      PORT: GATEWAY_PORT ?? PORT ?? 8080,
      // One address may carry several people's sessions (NAT); one knob raises all three limits.
      IP_RATE_LIMIT_PER_MINUTE: IP_RATE_LIMIT_PER_MINUTE ?? 2 * env.RATE_LIMIT_PER_MINUTE,
      ACCOUNT_RATE_LIMIT_PER_MINUTE: ACCOUNT_RATE_LIMIT_PER_MINUTE ?? env.RATE_LIMIT_PER_MINUTE,
      ALLOWED_ORIGINS: ALLOWED_ORIGINS ?? [env.PUBLIC_URL],
      COOKIE_SECURE: COOKIE_SECURE || env.NODE_ENV === 'production',
    }),
  );

export type Config = z.infer<typeof configSchema>;
