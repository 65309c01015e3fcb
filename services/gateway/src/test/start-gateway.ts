import type { Redis } from 'ioredis';
import { CSRF_COOKIE, Lifecycle, parseConfig, readCookie } from '@platform/shared';
import {
  requestJson,
  startTestServer,
  testEnv,
  testLogger,
  uniqueName,
  type JsonResponse,
} from '@platform/shared/testing';
import { compose } from '../compose';
import { configSchema, type Config } from '../config';
import { LOGIN_PATH } from '../login/auth-login';
import type { Upstream } from '../proxy/upstreams';
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
  config: Config;
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
export function sessionCookieOf(
  response: { headers: Headers },
  name = SESSION_COOKIE,
): { cookie: string; sessionId: string } | null {
  const setCookie = response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!setCookie) return null;
  const value = readCookie(setCookie, name)!;
  return { cookie: setCookie.split(';')[0]!, sessionId: value.slice(2, value.lastIndexOf('.')) };
}

/**
 * The gateway as main.ts composes it, on an ephemeral port in front of four recording stub
 * services, with its own Redis key prefix. `env` overrides the configuration (limits, upstream
 * URLs...).
 */
export async function startGateway(
  env: Record<string, string> = {},
  options: { redisUrl?: string; openApiFile?: string; dashboardDir?: string } = {},
): Promise<TestGateway> {
  const logger = testLogger('gateway');
  const lifecycle = new Lifecycle(logger);
  const upstreams: Upstream[] = ['auth', 'projects', 'deployments', 'webhooks'];
  const stubs = Object.fromEntries(
    await Promise.all(upstreams.map(async (name) => [name, await startStubService(name)])),
  ) as Record<Upstream, StubService>;
  for (const stub of Object.values(stubs)) lifecycle.onShutdown(stub.name, () => stub.close());
  const prefix = `${uniqueName('gw')}:`;
  const parse = () =>
    parseConfig(configSchema, {
      ...testEnv(),
      ...(options.redisUrl && { REDIS_URL: options.redisUrl }),
      SESSION_SECRET: TEST_SESSION_SECRET,
      REDIS_PREFIX: prefix,
      AUTH_URL: stubs.auth.url,
      PROJECTS_URL: stubs.projects.url,
      DEPLOYMENTS_URL: stubs.deployments.url,
      WEBHOOKS_URL: stubs.webhooks.url,
      // Files log in many times; the login limit has its own test.
      LOGIN_RATE_LIMIT_PER_MINUTE: '10000',
      ...env,
    });
  let config: ReturnType<typeof parse>;
  try {
    config = parse();
  } catch (err) {
    // A configuration the gateway refuses: the stubs started for it go again.
    await lifecycle.shutdown('refused configuration');
    throw err;
  }
  const seams = { openApiFile: options.openApiFile, dashboardDir: options.dashboardDir };
  const { app, redis } = await compose(config, { logger, lifecycle }, seams).catch(async (err) => {
    await lifecycle.shutdown('start failed');
    throw err;
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
  lifecycle.onShutdown('test keys', async () => {
    if (redis.status !== 'ready') return;
    const leftovers = await keys('*');
    if (leftovers.length > 0) await redis.del(...leftovers);
  });
  const server = await startTestServer(app);
  lifecycle.onShutdown('test server', () => server.close());

  const request = (path: string, init: GatewayRequest = {}) =>
    requestJson(`${server.url}${path}`, {
      method: init.method,
      body: init.body,
      headers: { ...init.headers, ...(init.cookie && { cookie: init.cookie }) },
    });

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
        headers: { cookie: [`${CSRF_COOKIE}=${csrf}`, init.cookie].filter(Boolean).join('; ') },
      });
      const session = sessionCookieOf(response);
      if (response.status !== 200 || !session) {
        throw new Error(`login failed: ${response.status} ${JSON.stringify(response.body)}`);
      }
      return { response, ...session };
    },
    close: () => lifecycle.shutdown('test over'),
  };
}
