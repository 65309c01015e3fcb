import Redis from 'ioredis';
import { testInfraUrls, uniqueName, waitFor } from './testing';
import { setTimeout as delay } from 'node:timers/promises';

describe('Redis (real server)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(testInfraUrls().redisUrl);
  });
  afterAll(() => redis.quit());

  it('expires a key when its TTL runs out', async () => {
    const key = uniqueName('ttl');
    await redis.set(key, 'value', 'PX', 300);
    expect(await redis.get(key)).toBe('value');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await waitFor(async () => (await redis.exists(key)) === 0, {
      timeoutMs: 3_000,
      what: 'the key to expire',
    });
    expect(await redis.get(key)).toBeNull();
  });

  it('keeps a key whose TTL was pushed back', async () => {
    const key = uniqueName('ttl');
    await redis.set(key, 'value', 'PX', 300);
    await redis.pexpire(key, 60_000);
    await delay(400);
    expect(await redis.get(key)).toBe('value');
    await redis.del(key);
  });
});
