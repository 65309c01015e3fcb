import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { freePort } from './helpers';
import { INFRA_SCRIPT } from './infra';

const run = promisify(execFile);

/**
 * The local Redis of scripts/infra asks for a password (issue 21, defence in depth): the gateway's
 * sessions are there, and a tenant's code that reached its port must not read or write them.
 * A Redis of its own (own port, run directory and cache, so its password file is new), never the
 * shared one.
 */
describe('the local Redis (scripts/infra/redis.sh)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'infra-redis-'));
  const secretsDir = join(dir, 'cache/platform-dev/secrets');
  let env: NodeJS.ProcessEnv;
  const infra = async (...args: string[]) =>
    (await run('bash', [INFRA_SCRIPT, ...args], { env, timeout: 60_000 })).stdout;
  const urlOf = async () => (await infra('url', 'redis')).trim().replace(/^REDIS_URL=/, '');

  beforeAll(async () => {
    env = {
      ...process.env,
      REDIS_PORT: String(await freePort()),
      PLATFORM_RUN_DIR: join(dir, 'run'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    };
    await infra('start', 'redis');
  });
  afterAll(async () => {
    await infra('stop', 'redis');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a client without the password, and lets in one with the URL infra.sh gives', async () => {
    const url = await urlOf();
    expect(url).toMatch(/^redis:\/\/:[0-9a-f]{64}@127\.0\.0\.1:\d+$/);

    const anonymous = new Redis(`redis://127.0.0.1:${env.REDIS_PORT}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    anonymous.on('error', () => undefined);
    try {
      await expect(anonymous.get('gateway:sess:any')).rejects.toThrow(/NOAUTH/);
    } finally {
      anonymous.disconnect();
    }
    const client = new Redis(url, { lazyConnect: true });
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });

  it('keeps the password in a file only its owner reads, never on the command line', async () => {
    const password = readFileSync(join(secretsDir, 'redis-password'), 'utf8');
    expect(await urlOf()).toContain(`:${password}@`);
    expect(statSync(secretsDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(secretsDir, 'redis-password')).mode & 0o777).toBe(0o600);
    const pid = readFileSync(join(dir, 'run/redis/redis.pid'), 'utf8').trim();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(password);
    expect(await infra('status', 'redis')).not.toContain(password);
  });

  it('uses the same password after a restart: it is made once per machine', async () => {
    const before = await urlOf();
    await infra('restart', 'redis');
    expect(await urlOf()).toBe(before);
    const client = new Redis(before, { lazyConnect: true });
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});
