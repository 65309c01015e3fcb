import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { INFRA_SCRIPT, errorBody, freePort, waitFor } from '@platform/shared/testing';
import { LOGIN_PATH } from '../login/auth-login';
import { startGateway, type LoggedIn, type TestGateway } from '../test/start-gateway';
import { GOOD_CREDENTIAL, STUB_ACCOUNT } from '../test/stubs';

const run = promisify(execFile);

/**
 * A Redis of this file's own, run by infra.sh (REDIS_PORT, PLATFORM_RUN_DIR): stopping it cannot
 * break the other test files that share the common Redis in parallel.
 */
async function startPrivateRedis() {
  const port = await freePort();
  const runDir = await mkdtemp(join(tmpdir(), 'gateway-redis-outage-'));
  const env = { ...process.env, REDIS_PORT: String(port), PLATFORM_RUN_DIR: runDir };
  const infra = (command: 'start' | 'stop') =>
    run('bash', [INFRA_SCRIPT, command, 'redis'], { env });
  await infra('start');
  // With the password this machine's local Redis asks for (scripts/infra/redis.sh).
  const { stdout } = await run('bash', [INFRA_SCRIPT, 'url', 'redis'], { env });
  return {
    url: stdout.trim().replace(/^REDIS_URL=/, ''),
    start: () => infra('start'),
    stop: () => infra('stop'),
    async remove() {
      await infra('stop');
      await rm(runDir, { recursive: true, force: true });
    },
  };
}

describe('sessions while Redis is unavailable', () => {
  let redisServer: Awaited<ReturnType<typeof startPrivateRedis>>;
  let gateway: TestGateway;
  let session: LoggedIn;

  beforeAll(async () => {
    redisServer = await startPrivateRedis();
    gateway = await startGateway({}, { redisUrl: redisServer.url });
    session = await gateway.logIn();
  });
  afterAll(async () => {
    try {
      await gateway?.close();
    } finally {
      await redisServer?.remove();
    }
  });

  const projects = () => gateway.request('/api/projects', { cookie: session.cookie });

  it('answers 503 within 2 s when Redis is stopped, and serves the same session once it is back', async () => {
    expect((await projects()).status).toBe(200);
    // A production Redis persists its data; this one is told to, so the session outlives the restart.
    await gateway.redis.save();
    await redisServer.stop();
    try {
      const started = Date.now();
      const during = await projects();
      const elapsed = Date.now() - started;

      expect(during.status).toBe(503);
      expect(during.body).toEqual(errorBody('SERVICE_UNAVAILABLE'));
      expect(elapsed).toBeLessThan(2_000);
      expect((await gateway.request('/api/projects')).status).toBe(503);
      expect((await gateway.request('/readyz')).status).toBe(503);
      expect((await gateway.request('/healthz')).status).toBe(200);
    } finally {
      await redisServer.start();
    }

    const after = await waitFor(
      async () => {
        const response = await projects();
        return response.status === 200 ? response : null;
      },
      { timeoutMs: 10_000, what: 'the session to work again' },
    );
    expect(after.body).toEqual({ service: 'projects', method: 'GET', path: '/api/projects' });
    expect(gateway.stubs.projects.received.at(-1)?.accountId).toBe(STUB_ACCOUNT.id);
  });

  it('starts no session and asks auth nothing while Redis is stopped', async () => {
    const before = gateway.stubs.auth.received.length;
    await redisServer.stop();
    try {
      const response = await gateway.request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: GOOD_CREDENTIAL, csrfToken: 'c' },
        headers: { cookie: 'g_csrf_token=c' },
      });

      expect(response.status).toBe(503);
      expect(response.headers.getSetCookie()).toEqual([]);
      expect(gateway.stubs.auth.received.length).toBe(before);
    } finally {
      await redisServer.start();
    }
    await waitFor(async () => (await gateway.request('/readyz')).status === 200, {
      what: 'redis back',
    });
  });

  it('answers 503 within 2 s when Redis accepts connections but does not answer', async () => {
    await waitFor(async () => (await projects()).status === 200, { what: 'redis back' });
    const admin = new Redis(redisServer.url);
    try {
      await admin.call('CLIENT', 'PAUSE', '2500', 'ALL');
      const started = Date.now();

      const during = await projects();

      expect(during.status).toBe(503);
      expect(during.body).toEqual(errorBody('SERVICE_UNAVAILABLE'));
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      admin.disconnect();
    }
    await waitFor(async () => (await projects()).status === 200, { what: 'redis to answer again' });
  });
});
