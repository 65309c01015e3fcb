import { errorBody, useRunning } from '@platform/shared/testing';
import { CSRF_COOKIE } from '@platform/shared';
import { LOGIN_PATH } from '../login/auth-login';
import { sessionCookieOf, startGateway } from '../test/start-gateway';
import { GOOD_CREDENTIAL, STUB_ACCOUNT } from '../test/stubs';
import { SECURE_SESSION_COOKIE } from './sessions';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** A session as express-session stores it in Redis. */
type StoredSession = { createdAt: number; cookie: { expires: string } };

/** As if the session had started `days` days ago. */
const createdDaysAgo = (days: number) => (session: StoredSession) => ({
  ...session,
  createdAt: Date.now() - days * DAY_MS,
});

/** As if its cookie had last been renewed `minutes` minutes ago. */
const renewedMinutesAgo = (minutes: number) => (session: StoredSession) => ({
  ...session,
  cookie: {
    ...session.cookie,
    expires: new Date(Date.now() + 7 * DAY_MS - minutes * MINUTE_MS).toISOString(),
  },
});

describe('sessions', () => {
  const gateway = useRunning(() => startGateway());

  /** Logs in, then rewrites the stored session with each change in turn, keeping its TTL. */
  async function logInAndAge(...changes: ((session: StoredSession) => StoredSession)[]) {
    const { cookie, sessionId } = await gateway().logIn();
    const key = gateway().sessionKey(sessionId);
    const stored = JSON.parse((await gateway().redis.get(key))!) as StoredSession;
    const aged = changes.reduce((session, change) => change(session), stored);
    await gateway().redis.set(key, JSON.stringify(aged), 'KEEPTTL');
    return { cookie, key };
  }

  const expiresOf = (setCookie: string) => Date.parse(/Expires=([^;]+)/.exec(setCookie)![1]!);

  describe('POST /api/accounts/logout', () => {
    it('answers 204, deletes the session in Redis and clears the cookie', async () => {
      const { cookie, sessionId } = await gateway().logIn();

      const response = await gateway().request('/api/accounts/logout', { method: 'POST', cookie });

      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect(await gateway().redis.exists(gateway().sessionKey(sessionId))).toBe(0);
      const [cleared, ...others] = response.headers.getSetCookie();
      expect(others).toEqual([]);
      expect(cleared).toMatch(/^platform\.sid=;/);
      expect(cleared).toMatch(/HttpOnly/);
      expect(expiresOf(cleared!)).toBeLessThan(Date.now());
    });

    it('makes a replayed cookie of the ended session 401', async () => {
      const { cookie } = await gateway().logIn();
      await gateway().request('/api/accounts/logout', { method: 'POST', cookie });

      const replay = await gateway().request('/api/projects', { cookie });

      expect(replay.status).toBe(401);
      expect(replay.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
    });

    it('answers 401 without a session', async () => {
      const response = await gateway().request('/api/accounts/logout', { method: 'POST' });

      expect(response.status).toBe(401);
      expect(response.body.error).toBe('UNAUTHORIZED');
    });
  });

  it('answers 401 to a tampered session cookie and stores nothing for it', async () => {
    const { cookie, sessionId } = await gateway().logIn();
    const otherFirst = sessionId.startsWith('A') ? 'B' : 'A';
    const tampered = cookie.replace(`s%3A${sessionId}`, `s%3A${otherFirst}${sessionId.slice(1)}`);
    expect(tampered).not.toBe(cookie);
    const sessionsBefore = await gateway().keys('sess:*');

    const response = await gateway().request('/api/projects', { cookie: tampered });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
    expect(response.headers.getSetCookie()).toEqual([]);
    expect((await gateway().keys('sess:*')).sort()).toEqual(sessionsBefore.sort());
    expect(await gateway().redis.exists(gateway().sessionKey(sessionId))).toBe(1);
  });

  describe('renewal (7 idle days, renewed at most every 10 minutes)', () => {
    it('sends no cookie and leaves the Redis TTL alone within 10 minutes of the last renewal', async () => {
      const { cookie, key } = await logInAndAge(renewedMinutesAgo(9));
      const stored = await gateway().redis.get(key);
      await gateway().redis.pexpire(key, MINUTE_MS);

      const response = await gateway().request('/api/projects', { cookie });

      expect(response.status).toBe(200);
      expect(response.headers.getSetCookie()).toEqual([]);
      const ttl = await gateway().redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(MINUTE_MS);
      expect(await gateway().redis.get(key)).toBe(stored);
    });

    it('pushes the Redis TTL and the cookie expiry 7 days ahead once the last renewal is over 10 minutes old', async () => {
      const { cookie, key } = await logInAndAge(renewedMinutesAgo(11));
      await gateway().redis.pexpire(key, MINUTE_MS);

      const response = await gateway().request('/api/projects', { cookie });

      expect(response.status).toBe(200);
      expect(await gateway().redis.pttl(key)).toBeGreaterThan(7 * DAY_MS - MINUTE_MS);
      const [renewed, ...others] = response.headers.getSetCookie();
      expect(others).toEqual([]);
      expect(renewed!.split(';')[0]).toBe(cookie);
      expect(Math.abs(expiresOf(renewed!) - (Date.now() + 7 * DAY_MS))).toBeLessThan(MINUTE_MS);
      const stored = JSON.parse((await gateway().redis.get(key))!);
      expect(stored).toMatchObject({ accountId: STUB_ACCOUNT.id, renewedAt: expect.any(Number) });
      // The cookie's Expires has whole seconds, the stored one milliseconds.
      expect(Math.abs(Date.parse(stored.cookie.expires) - expiresOf(renewed!))).toBeLessThan(1_000);
    });

    it('does not renew again on the request right after a renewal', async () => {
      const { cookie, key } = await logInAndAge(renewedMinutesAgo(11));
      const first = await gateway().request('/api/projects', { cookie });
      const stored = await gateway().redis.get(key);

      const second = await gateway().request('/api/projects', { cookie });

      expect(first.headers.getSetCookie()).toHaveLength(1);
      expect(second.status).toBe(200);
      expect(second.headers.getSetCookie()).toEqual([]);
      expect(await gateway().redis.get(key)).toBe(stored);
    });

    it('renews no session that has outlived its absolute lifetime', async () => {
      const { cookie, key } = await logInAndAge(renewedMinutesAgo(11), createdDaysAgo(31));

      const response = await gateway().request('/api/projects', { cookie });

      expect(response.status).toBe(401);
      expect(await gateway().redis.exists(key)).toBe(0);
      const [cleared, ...others] = response.headers.getSetCookie();
      expect(others).toEqual([]);
      expect(expiresOf(cleared!)).toBeLessThan(Date.now());
    });
  });

  it('answers 401 once the session has expired in Redis', async () => {
    const { cookie, sessionId } = await gateway().logIn();
    await gateway().redis.del(gateway().sessionKey(sessionId));

    const response = await gateway().request('/api/projects', { cookie });

    expect(response.status).toBe(401);
    expect(response.body.error).toBe('UNAUTHORIZED');
  });

  it('ends a session older than the absolute lifetime, however active, with 401', async () => {
    const { cookie, key } = await logInAndAge(createdDaysAgo(31));

    const response = await gateway().request('/api/projects', { cookie });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
    expect(await gateway().redis.exists(key)).toBe(0);
    expect(expiresOf(response.headers.getSetCookie()[0]!)).toBeLessThan(Date.now());
  });

  it('keeps a session younger than the absolute lifetime', async () => {
    const { cookie } = await logInAndAge(createdDaysAgo(29));

    const response = await gateway().request('/api/projects', { cookie });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ service: 'projects', method: 'GET', path: '/api/projects' });
  });

  it('signs the identity of the session account for the service', async () => {
    const { cookie } = await gateway().logIn();
    const before = gateway().stubs.auth.received.length;

    const response = await gateway().request('/api/accounts/me', { cookie });

    expect(response.status).toBe(200);
    expect(gateway().stubs.auth.received.slice(before)).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/accounts/me',
        accountId: STUB_ACCOUNT.id,
      }),
    ]);
  });

  describe('without a session', () => {
    const routes: [string, string][] = [
      ['GET', '/api/accounts/me'],
      ['POST', '/api/accounts/logout'],
      ['GET', '/api/projects'],
      ['POST', '/api/projects'],
      ['GET', '/api/projects/p1'],
      ['PATCH', '/api/projects/p1'],
      ['DELETE', '/api/projects/p1'],
      ['GET', '/api/projects/p1/services'],
      ['POST', '/api/projects/p1/services'],
      ['GET', '/api/projects/p1/services/s1/deployments'],
      ['POST', '/api/projects/p1/services/s1/deployments'],
      ['GET', '/api/projects/p1/services/s1/deployments/d1'],
      ['POST', '/api/projects/p1/services/s1/deployments/d1/cancel'],
      ['GET', '/api/projects/p1/webhooks'],
      ['POST', '/api/projects/p1/webhooks/w1/test'],
      ['GET', '/api/not-a-route'],
    ];

    it.each(routes)(
      'answers %s %s with 401 and the contract body, reaching no service',
      async (method, path) => {
        const received = () =>
          Object.values(gateway().stubs).reduce((n, stub) => n + stub.received.length, 0);
        const before = received();

        const response = await gateway().request(path, {
          method,
          body: method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined,
        });

        expect(response.status).toBe(401);
        expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
        expect(Object.keys(response.body)).toEqual(['error', 'message']);
        expect(received()).toBe(before);
      },
    );
  });
});

describe('the session cookie over HTTPS (behind a TLS-terminating proxy)', () => {
  const gateway = useRunning(() => startGateway({ COOKIE_SECURE: 'true', TRUST_PROXY_HOPS: '1' }));
  const https = { 'x-forwarded-proto': 'https' };

  it('is __Host-platform.sid: Secure, path /, no Domain; it authenticates and logout clears it', async () => {
    const csrf = 'csrf-over-https';
    const login = await gateway().request(LOGIN_PATH, {
      method: 'POST',
      body: { credential: GOOD_CREDENTIAL, csrfToken: csrf },
      headers: { ...https, cookie: `${CSRF_COOKIE}=${csrf}` },
    });
    const setCookie = login.headers.getSetCookie().find((c) => c.startsWith('__Host-'));

    expect(login.status).toBe(200);
    expect(setCookie).toMatch(
      /^__Host-platform\.sid=[^;]+; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(sessionCookieOf(login)).toBeNull(); // no cookie under the plain name
    const { cookie } = sessionCookieOf(login, SECURE_SESSION_COOKIE)!;
    const me = await gateway().request('/api/accounts/me', { headers: { ...https, cookie } });
    expect(me.status).toBe(200);

    const logout = await gateway().request('/api/accounts/logout', {
      method: 'POST',
      headers: { ...https, cookie },
    });
    expect(logout.status).toBe(204);
    expect(logout.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^__Host-platform\.sid=; Path=\/; Expires=Thu, 01 Jan 1970/),
    ]);
  });
});
