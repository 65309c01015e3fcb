import { useRunning } from '@platform/shared/testing';
import { startGateway, type TestGateway } from '../test/start-gateway';
import { GOOD_CREDENTIAL, STUB_ACCOUNT } from '../test/stubs';
import { newAccountId, startAccountsGateway } from '../test/accounts-auth';
import { LOGIN_PATH } from '../login/auth-login';
import {
  expectCountdownOfThree,
  expectRefused,
  limitsPerMinute,
  rateLimitFields,
} from '../test/rate-limit-answers';
import { clientNetwork } from './rate-limit';

/** Within the one-minute window of these limits. */
const expectRateLimited = (response: Parameters<typeof expectRefused>[0]) =>
  expectRefused(response, [1, 60]);

/**
 * Logs in and sends `allowed` requests, then one more: the statuses of the first ones, the last
 * answer, and how many of them reached the service.
 */
async function logInAndExceed(gateway: TestGateway, allowed: number) {
  const { cookie } = await gateway.logIn();
  const before = gateway.stubs.projects.received.length;
  const statuses: number[] = [];
  for (let i = 0; i < allowed; i++) {
    statuses.push((await gateway.request('/api/projects', { cookie })).status);
  }
  const limited = await gateway.request('/api/projects', { cookie });
  return { statuses, limited, reached: gateway.stubs.projects.received.length - before };
}

describe('rate limits', () => {
  describe('per session', () => {
    const gateway = useRunning(() => startGateway(limitsPerMinute(3, 1000, 1000)));

    it('answers 429 RATE_LIMITED with Retry-After past the limit, without reaching the service', async () => {
      const { statuses, limited, reached } = await logInAndExceed(gateway(), 3);

      expect(statuses).toEqual([200, 200, 200]);
      expectRateLimited(limited);
      expect(reached).toBe(3);
    });

    it('tells every answer the limit that applies, counting down, the refusal included', async () => {
      const { cookie } = await gateway().logIn();
      const answers = [];
      for (let i = 0; i < 4; i++)
        answers.push(await gateway().request('/api/projects', { cookie }));
      const anonymous = await gateway().request('/api/projects');

      expectCountdownOfThree(answers, [1, 60]);
      // Without a session only the per-IP limit applies.
      expect(rateLimitFields(anonymous)).toEqual([401, '1000', expect.stringMatching(/^\d+$/)]);
    });

    it('counts in a Redis key that expires with the one-minute window', async () => {
      const { cookie } = await gateway().logIn();
      const keysBefore = await gateway().keys('rl:session:*');

      await gateway().request('/api/projects', { cookie });

      const [counter, ...others] = (await gateway().keys('rl:session:*')).filter(
        (k) => !keysBefore.includes(k),
      );
      expect(others).toEqual([]);
      expect(await gateway().redis.get(counter!)).toBe('1');
      const ttl = await gateway().redis.pttl(counter!);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('counts each session on its own', async () => {
      const first = await gateway().logIn();
      const second = await gateway().logIn();
      for (let i = 0; i < 4; i++)
        await gateway().request('/api/projects', { cookie: first.cookie });

      const response = await gateway().request('/api/projects', { cookie: second.cookie });

      expect(response.status).toBe(200);
    });
  });

  describe('per client IP', () => {
    const gateway = useRunning(() => startGateway({ IP_RATE_LIMIT_PER_MINUTE: '2' }));

    it('limits requests from one address, with or without a session', async () => {
      const first = await gateway().request('/api/projects');
      const second = await gateway().request('/api/projects');
      const third = await gateway().request('/api/projects');

      expect([first.status, second.status]).toEqual([401, 401]);
      expectRateLimited(third);
      expect(await gateway().keys('rl:ip:*')).toHaveLength(1);
    });
  });

  describe('per client network behind a trusted proxy', () => {
    const gateway = useRunning(() =>
      startGateway({ IP_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY_HOPS: '1' }),
    );
    const from = (address: string) =>
      gateway().request('/api/projects', { headers: { 'x-forwarded-for': address } });

    it('counts the addresses of one IPv6 /64 together, and another /64 apart', async () => {
      const statuses = [
        (await from('2001:db8:1:2::1')).status,
        (await from('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).status,
      ];
      const third = await from('2001:0db8:0001:0002:ffff::9');
      const elsewhere = await from('2001:db8:1:3::1');

      expect(statuses).toEqual([401, 401]);
      expectRateLimited(third);
      expect(elsewhere.status).toBe(401);
    });
  });

  describe('per client IP and per session together', () => {
    const gateway = useRunning(() => startGateway({ IP_RATE_LIMIT_PER_MINUTE: '3' }));

    it('limits a logged-in client by its address too, counting the request under both keys', async () => {
      const { statuses, limited, reached } = await logInAndExceed(gateway(), 2);

      // The login was the address's first request.
      expect(statuses).toEqual([200, 200]);
      expectRateLimited(limited);
      expect(reached).toBe(2);
      const [ipKey] = await gateway().keys('rl:ip:*');
      const [sessionKey] = await gateway().keys('rl:session:*');
      const [accountKey] = await gateway().keys('rl:account:*');
      expect(await gateway().redis.get(ipKey!)).toBe('4');
      expect(await gateway().redis.get(sessionKey!)).toBe('3');
      // The login counted against the account as well.
      expect(accountKey).toBe(`${gateway().config.REDIS_PREFIX}rl:account:${STUB_ACCOUNT.id}`);
      expect(await gateway().redis.get(accountKey!)).toBe('4');
    });
  });

  describe('per account', () => {
    const gateway = useRunning(() => startAccountsGateway(limitsPerMinute(1000, 4, 1000)));
    const list = (cookie: string) => gateway().request('/api/projects', { cookie });
    const reachedProjects = () => gateway().stubs.projects.received.length;

    it('carries the count on across a new login: a new session does not start afresh', async () => {
      const account = newAccountId();
      const first = await gateway().logInAs(account);
      const statuses = [(await list(first)).status, (await list(first)).status];
      const second = await gateway().logInAs(account);
      const before = reachedProjects();

      const limited = await list(second);

      expect(second).not.toBe(first);
      // The login, two requests, the second login: the account's 4 in this minute are spent.
      expect(statuses).toEqual([200, 200]);
      expectRateLimited(limited);
      expect(reachedProjects()).toBe(before);
      expect(limited.headers.get('ratelimit-limit')).toBe('4');
      expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    });

    it('counts the sessions of one account together, whichever session sends', async () => {
      const account = newAccountId();
      const one = await gateway().logInAs(account);
      const other = await gateway().logInAs(account);

      const answers = [await list(one), await list(other), await list(one), await list(other)];

      expect(answers.map((a) => [a.status, a.headers.get('ratelimit-remaining')])).toEqual([
        [200, '1'],
        [200, '0'],
        [429, '0'],
        [429, '0'],
      ]);
      const [key, ...others] = await gateway().keys(`rl:account:${account}`);
      expect(others).toEqual([]);
      expect(await gateway().redis.get(key!)).toBe('6');
    });

    it('leaves another account alone', async () => {
      const spent = newAccountId();
      const cookie = await gateway().logInAs(spent);
      for (let i = 0; i < 3; i++) await list(cookie);
      expect((await list(cookie)).status).toBe(429);

      const other = await gateway().logInAs(newAccountId());
      const answer = await list(other);

      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-remaining')).toBe('2');
    });

    it('refuses a login once the account has spent its count, starting no session', async () => {
      const account = newAccountId();
      const cookie = await gateway().logInAs(account);
      for (let i = 0; i < 3; i++) await list(cookie);
      const sessionsBefore = await gateway().keys('sess:*');

      const login = await gateway().request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: `account:${account}`, csrfToken: 'c' },
        headers: { cookie: 'g_csrf_token=c' },
      });

      expectRateLimited(login);
      expect(login.headers.getSetCookie()).toEqual([]);
      expect(await gateway().keys('sess:*')).toEqual(sessionsBefore);
    });
  });

  describe('logins per account', () => {
    const gateway = useRunning(() =>
      startAccountsGateway({ LOGIN_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY_HOPS: '1' }),
    );
    const logInFrom = (address: string, accountId: string) =>
      gateway().request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: `account:${accountId}`, csrfToken: 'c' },
        headers: { cookie: 'g_csrf_token=c', 'x-forwarded-for': address },
      });

    it('are limited once auth has verified them, from whatever address they come', async () => {
      const account = newAccountId();
      const statuses = [
        (await logInFrom('203.0.113.1', account)).status,
        (await logInFrom('203.0.113.2', account)).status,
      ];
      const sessionsBefore = await gateway().keys('sess:*');

      const limited = await logInFrom('203.0.113.3', account);
      const anotherAccount = await logInFrom('203.0.113.4', newAccountId());

      expect(statuses).toEqual([200, 200]);
      expectRateLimited(limited);
      expect(limited.headers.getSetCookie()).toEqual([]);
      // Auth was asked (only it knows the account); no session started for the refused login.
      expect(gateway().verifiedLogins.filter((id) => id === account)).toHaveLength(3);
      expect(anotherAccount.status).toBe(200);
      expect(await gateway().keys('sess:*')).toHaveLength(sessionsBefore.length + 1);
    });

    it("tell the most constrained limit, the address's or the account's, counted before or after auth", async () => {
      const fields = (r: { headers: Headers }) => [
        r.headers.get('ratelimit-limit'),
        r.headers.get('ratelimit-remaining'),
      ];
      const first = await logInFrom('203.0.113.10', newAccountId());
      // The address's last attempt this minute, of an account with one login left.
      const second = await logInFrom('203.0.113.10', newAccountId());
      const account = newAccountId();
      await logInFrom('203.0.113.11', account);
      // An address with one attempt left, the account's last login.
      const third = await logInFrom('203.0.113.12', account);

      expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
      expect([fields(first), fields(second), fields(third)]).toEqual([
        ['2', '1'],
        ['2', '0'],
        ['2', '0'],
      ]);
    });
  });

  describe('login attempts', () => {
    const gateway = useRunning(() => startGateway({ LOGIN_RATE_LIMIT_PER_MINUTE: '2' }));

    it('are limited more strictly, before auth is asked', async () => {
      const attempt = () =>
        gateway().request(LOGIN_PATH, {
          method: 'POST',
          body: { credential: 'guess', csrfToken: 'c' },
          headers: { cookie: 'g_csrf_token=c' },
        });

      const statuses = [(await attempt()).status, (await attempt()).status];
      const limited = await attempt();
      const evenAGoodOne = await gateway().request(LOGIN_PATH, {
        method: 'POST',
        body: { credential: GOOD_CREDENTIAL, csrfToken: 'c' },
        headers: { cookie: 'g_csrf_token=c' },
      });

      expect(statuses).toEqual([401, 401]);
      expectRateLimited(limited);
      expect(evenAGoodOne.status).toBe(429);
      expect(gateway().stubs.auth.received).toHaveLength(2);
      expect(await gateway().keys('sess:*')).toEqual([]);
    });
  });
});

describe('clientNetwork', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0042:0000:8a2e:0370:7334', '2001:db8:0:42::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('counts %s as %s', (address, network) => {
    expect(clientNetwork(address)).toBe(network);
  });
});
