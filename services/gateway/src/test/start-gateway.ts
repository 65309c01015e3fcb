import { Agent } from 'node:http';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { createMetrics, parseConfig } from '@platform/shared';
import {
  TEST_INTERNAL_SECRET,
  requestJson,
  startTestServer,
  testInfraUrls,
  testLogger,
  uniqueName,
  type JsonResponse,
} from '@platform/shared/testing';
import { createApp } from '../app';
import { gatewayEnv, type GatewayConfig } from '../config';
import { LOGIN_PATH } from '../login/auth-login';
import type { Upstream } from '../proxy/upstreams';
import { createRedis, redisReady } from '../redis/redis';
import { SESSION_COOKIE } from '../sessions/sessions';
import { GOOD_CREDENTIAL, startStubService, type StubService } from './stubs';

export const TEST_SESSION_SECRET = 'test-session-secret-with-at-least-32-characters';

export interface GatewayRequest {
  method?: string;
  /** The session cookie pair (`platform.sid=...`), sent as the Cookie header. */
  cookie?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface TestGateway {
  url: string;
  config: GatewayConfig;
  redis: Redis;
  stubs: Record<Upstream, StubService>;
  /** The Redis key of a session id. */
  sessionKey(sessionId: string): string;
  /** Keys under this gateway's prefix matching `pattern` (e.g. `sess:*`). */
  keys(pattern: string): Promise<string[]>;
  request(path: string, init?: GatewayRequest): Promise<JsonResponse>;
  /** Logs in through the stub auth with a matching g_csrf_token. */
  logIn(init?: { cookie?: string; credential?: string }): Promise<LoggedIn>;
  close(): Promise<void>;
}

export interface LoggedIn {
  response: JsonResponse;
  /** `platform.sid=...` */
  cookie: string;
  sessionId: string;
}

/** The session cookie pair and the session id it carries (`s:<id>.<signature>`). */
export function sessionCookieOf(response: {
  headers: Headers;
}): { cookie: string; sessionId: string } | null {
  const setCookie = response.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!setCookie) return null;
  const cookie = setCookie.split(';')[0]!;
  const value = decodeURIComponent(cookie.slice(SESSION_COOKIE.length + 1));
  return { cookie, sessionId: value.slice(2, value.lastIndexOf('.')) };
}

/**
 * A gateway app on an ephemeral port in front of four recording stub services, with its own
 * Redis key prefix. `env` overrides the configuration (limits, upstream URLs...).
 */
export async function startGateway(
  env: Record<string, string> = {},
  options: { redisUrl?: string; openApiFile?: string } = {},
): Promise<TestGateway> {
  const logger = testLogger('gateway');
  const [auth, projects, deployments, webhooks] = await Promise.all(
    ['auth', 'projects', 'deployments', 'webhooks'].map(startStubService),
  );
  const stubs = {
    auth: auth!,
    projects: projects!,
    deployments: deployments!,
    webhooks: webhooks!,
  };
  const prefix = `${uniqueName('gw')}:`;
  const config = parseConfig(gatewayEnv, {
    NODE_ENV: 'test',
    INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    SESSION_SECRET: TEST_SESSION_SECRET,
    REDIS_URL: options.redisUrl ?? testInfraUrls().redisUrl,
    REDIS_PREFIX: prefix,
    AUTH_URL: stubs.auth.url,
    PROJECTS_URL: stubs.projects.url,
    DEPLOYMENTS_URL: stubs.deployments.url,
    WEBHOOKS_URL: stubs.webhooks.url,
    // Files log in many times; the login limit has its own test.
    LOGIN_RATE_LIMIT_PER_MINUTE: '10000',
    ...env,
  });
  const redis = createRedis(config.REDIS_URL, logger);
  await redisReady(redis);
  const agent = new Agent({ keepAlive: true });
  const app = createApp({
    config,
    redis,
    logger,
    metrics: createMetrics('gateway'),
    upstreamAgent: agent,
    openApiFile: options.openApiFile ?? join(__dirname, 'no-such-openapi.json'),
  });
  const server = await startTestServer(app);

  const request = (path: string, init: GatewayRequest = {}) =>
    requestJson(`${server.url}${path}`, {
      method: init.method,
      body: init.body,
      headers: { ...init.headers, ...(init.cookie && { cookie: init.cookie }) },
    });

  const keys = async (pattern: string) => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}${pattern}`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  };

  return {
    url: server.url,
    config,
    redis,
    stubs,
    sessionKey: (sessionId) => `${prefix}sess:${sessionId}`,
    keys,
    request,
    async logIn(init = {}) {
      const csrf = uniqueName('csrf');
      const response = await request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: init.credential ?? GOOD_CREDENTIAL, csrfToken: csrf },
        headers: { cookie: [`g_csrf_token=${csrf}`, init.cookie].filter(Boolean).join('; ') },
      });
      const session = sessionCookieOf(response);
      if (response.status !== 200 || !session) {
        throw new Error(`login failed: ${response.status} ${JSON.stringify(response.body)}`);
      }
      return { response, ...session };
    },
    async close() {
      await server.close();
      if (redis.status === 'ready') {
        const leftovers = await keys('*');
        if (leftovers.length > 0) await redis.del(...leftovers);
      }
      redis.disconnect();
      agent.destroy();
      await Promise.all(Object.values(stubs).map((stub) => stub.close()));
    },
  };
}
