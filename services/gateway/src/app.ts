import type { Agent } from 'node:http';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import {
  createMetrics,
  errorHandler,
  healthRouter,
  httpLogger,
  jsonBody,
  notFoundHandler,
  requireJsonBody,
  type Logger,
} from '@platform/shared';
import { appsProxy } from './apps/apps.proxy';
import type { Config } from './config';
import { dashboardStatic } from './dashboard/dashboard.static';
import { DEV_PREFIX, devIdpProxy } from './dev/dev-idp.proxy';
import { loginRouter, logoutRouter } from './login/login.routes';
import { openApiRouter, rejectUndocumentedMethods } from './openapi/openapi.routes';
import { serviceProxy } from './proxy/proxy';
import { rateLimit, rateLimiter } from './rate-limit/rate-limit';
import { rateLimitRules } from './rate-limit/rules';
import { checkOrigin } from './security/origin';
import { renewSession, requireSession, sessions } from './sessions/sessions';

export interface AppDeps {
  config: Config;
  redis: Redis;
  logger: Logger;
  /** Keep-alive agent for the upstream services (destroyed at shutdown by its owner). */
  upstreamAgent: Agent;
  /** Keep-alive agent for the runtime's router, in front of the tenant apps. */
  appsAgent: Agent;
  /** Where the OpenAPI document is read from (services/gateway/openapi.json). */
  openApiFile: string;
  /** The dashboard's build (apps/dashboard/dist): served at `/`. */
  dashboardDir: string;
  /** Aborted as shutdown begins (Lifecycle.stopping): open log streams end. */
  stopping?: AbortSignal;
}

/**
 * The gateway: the only process that reads sessions. In order: logs; a tenant app's host
 * (`<serviceId>.localhost`) to the runtime's router and nothing else; metrics, security headers,
 * health; dev-idp in development; the dashboard's pages and assets (GET, outside /api and /dev);
 * then for /api the Origin check, the public OpenAPI document,
 * the session, the rate limits (per IP, session, account and expensive operation), the login
 * callback, and behind a required session: its renewal, logout, JSON bodies and the proxy to the
 * services.
 */
export function createApp({
  config,
  redis,
  logger,
  upstreamAgent,
  appsAgent,
  stopping,
  openApiFile,
  dashboardDir,
}: AppDeps): Express {
  const metrics = createMetrics('gateway');
  const keys = {
    sessions: `${config.REDIS_PREFIX}sess:`,
  };
  const limits = rateLimitRules(config);
  const secureCookie = config.COOKIE_SECURE;

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY_HOPS || false);
  app.use(httpLogger(logger, { successLevel: 'debug' }));
  // Before the platform's own handling: an app's paths, headers and bodies are its own.
  app.use(
    appsProxy({
      hostSuffix: config.APPS_HOST_SUFFIX,
      routerUrl: config.RUNTIME_ROUTER_URL,
      agent: appsAgent,
      timeoutMs: config.APPS_IDLE_TIMEOUT,
      logger,
    }),
  );
  app.use(metrics.middleware);
  app.use(helmet());
  app.use(healthRouter({ redis: () => redis.ping() }));
  app.get('/metrics', metrics.handler);
  if (config.DEV_IDP_URL) app.use(devIdpProxy(config.DEV_IDP_URL, logger));
  app.use(
    dashboardStatic({
      dir: dashboardDir,
      signIn: {
        devIdpPath: config.DEV_IDP_URL ? `${DEV_PREFIX}/` : undefined,
        googleClientId: config.GOOGLE_CLIENT_ID,
      },
      logger,
    }),
  );

  app.use('/api', checkOrigin(config.ALLOWED_ORIGINS));
  // Public: the OpenAPI document is served before any session is asked for.
  app.use(openApiRouter(openApiFile));
  app.use(
    '/api',
    sessions({
      redis,
      keyPrefix: keys.sessions,
      secret: config.SESSION_SECRET,
      secureCookie,
      logger,
    }),
  );
  // Every limit of a request in one Redis call, so after the session is read: each request
  // counts against its client IP, with or without a session; a logged-in one against its session
  // and its account too, and an expensive operation against that operation's account limit.
  app.use('/api', rateLimit({ redis, rules: limits.requests }));
  const countLogin = rateLimiter({ redis, rules: limits.logins });
  // A method the API document does not give a path: 405, counted like any request.
  app.use(rejectUndocumentedMethods(openApiFile));
  app.use(
    loginRouter({
      authUrl: config.AUTH_URL,
      rateLimit: rateLimit({ redis, rules: limits.loginAttempts }),
      limitAccount: (req, res, accountId) => countLogin({ req, accountId }, res),
    }),
  );
  app.use(
    '/api',
    requireSession({ absoluteTtlMs: config.SESSION_ABSOLUTE_TTL, secureCookie }),
    renewSession({ renewAfterMs: config.SESSION_RENEW_AFTER }),
  );
  app.use(logoutRouter({ secureCookie }));
  app.use('/api', requireJsonBody, jsonBody());
  app.use(
    serviceProxy({
      upstreams: {
        auth: config.AUTH_URL,
        projects: config.PROJECTS_URL,
        deployments: config.DEPLOYMENTS_URL,
        webhooks: config.WEBHOOKS_URL,
      },
      agent: upstreamAgent,
      internalSecret: config.INTERNAL_SECRET,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      concurrency: config.UPSTREAM_CONCURRENCY,
      queueLimit: config.UPSTREAM_QUEUE_LIMIT,
      registry: metrics.registry,
      logger,
      stopping,
    }),
  );
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
