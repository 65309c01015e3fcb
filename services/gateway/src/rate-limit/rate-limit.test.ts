import { startGateway, type TestGateway } from '../test/start-gateway';
import { GOOD_CREDENTIAL } from '../test/stubs';
import { LOGIN_PATH } from '../login/auth-login';

function expectRateLimited(response: { status: number; headers: Headers; body: unknown }) {
  expect(response.status).toBe(429);
  expect(response.body).toEqual({ error: 'RATE_LIMITED', message: expect.any(String) });
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('rate limits', () => {
  describe('per session', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startGateway({
        RATE_LIMIT_PER_MINUTE: '3',
        IP_RATE_LIMIT_PER_MINUTE: '1000',
      });
    });
    afterAll(() => gateway.close());

    it('answers 429 RATE_LIMITED with Retry-After past the limit, without reaching the service', async () => {
      const { cookie } = await gateway.logIn();
      const before = gateway.stubs.projects.received.length;

      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await gateway.request('/api/projects', { cookie })).status);
      const limited = await gateway.request('/api/projects', { cookie });

      expect(statuses).toEqual([200, 200, 200]);
      expectRateLimited(limited);
      expect(gateway.stubs.projects.received.length - before).toBe(3);
    });

    it('counts in a Redis key that expires with the one-minute window', async () => {
      const { cookie } = await gateway.logIn();
      const keysBefore = await gateway.keys('rl:session:*');

      await gateway.request('/api/projects', { cookie });

      const [counter, ...others] = (await gateway.keys('rl:session:*')).filter(
        (k) => !keysBefore.includes(k),
      );
      expect(others).toEqual([]);
      expect(await gateway.redis.get(counter!)).toBe('1');
      const ttl = await gateway.redis.pttl(counter!);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('counts each session on its own', async () => {
      const first = await gateway.logIn();
      const second = await gateway.logIn();
      for (let i = 0; i < 4; i++) await gateway.request('/api/projects', { cookie: first.cookie });

      const response = await gateway.request('/api/projects', { cookie: second.cookie });

      expect(response.status).toBe(200);
    });
  });

  describe('per client IP', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startGateway({ IP_RATE_LIMIT_PER_MINUTE: '2' });
    });
    afterAll(() => gateway.close());

    it('limits requests from one address, with or without a session', async () => {
      const first = await gateway.request('/api/projects');
      const second = await gateway.request('/api/projects');
      const third = await gateway.request('/api/projects');

      expect([first.status, second.status]).toEqual([401, 401]);
      expectRateLimited(third);
      expect(await gateway.keys('rl:ip:*')).toHaveLength(1);
    });
  });

  describe('per client IP and per session together', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startGateway({
        IP_RATE_LIMIT_PER_MINUTE: '3',
        RATE_LIMIT_PER_MINUTE: '1000',
      });
    });
    afterAll(() => gateway.close());

    it('limits a logged-in client by its address too, counting the request under both keys', async () => {
      const { cookie } = await gateway.logIn();
      const before = gateway.stubs.projects.received.length;

      const statuses = [];
      for (let i = 0; i < 2; i++)
        statuses.push((await gateway.request('/api/projects', { cookie })).status);
      const limited = await gateway.request('/api/projects', { cookie });

      // The login was the address's first request.
      expect(statuses).toEqual([200, 200]);
      expectRateLimited(limited);
      expect(gateway.stubs.projects.received.length - before).toBe(2);
      const [ipKey] = await gateway.keys('rl:ip:*');
      const [sessionKey] = await gateway.keys('rl:session:*');
      expect(await gateway.redis.get(ipKey!)).toBe('4');
      expect(await gateway.redis.get(sessionKey!)).toBe('3');
    });
  });

  describe('login attempts', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startGateway({ LOGIN_RATE_LIMIT_PER_MINUTE: '2' });
    });
    afterAll(() => gateway.close());

    it('are limited more strictly, before auth is asked', async () => {
      const attempt = () =>
        gateway.request(LOGIN_PATH, {
          method: 'POST',
          body: { credential: 'guess', csrfToken: 'c' },
          headers: { cookie: 'g_csrf_token=c' },
        });

      const statuses = [(await attempt()).status, (await attempt()).status];
      const limited = await attempt();
      const evenAGoodOne = await gateway.request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: GOOD_CREDENTIAL, csrfToken: 'c' },
        headers: { cookie: 'g_csrf_token=c' },
      });

      expect(statuses).toEqual([401, 401]);
      expectRateLimited(limited);
      expect(evenAGoodOne.status).toBe(429);
      expect(gateway.stubs.auth.received).toHaveLength(2);
      expect(await gateway.keys('sess:*')).toEqual([]);
    });
  });
});
