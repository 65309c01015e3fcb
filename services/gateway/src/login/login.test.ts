import { errorBody, startDroppingServer, useRunning } from '@platform/shared/testing';
import { sessionCookieOf, startGateway } from '../test/start-gateway';
import { GOOD_CREDENTIAL, STUB_ACCOUNT } from '../test/stubs';
import { LOGIN_PATH } from './auth-login';

const DAY_MS = 24 * 3600 * 1000;

describe('POST /api/accounts/google-auth-login-callback', () => {
  const gateway = useRunning(() => startGateway());

  const postLogin = (body: unknown, cookie: string, headers: Record<string, string> = {}) =>
    gateway().request(LOGIN_PATH, { method: 'POST', body, headers: { cookie, ...headers } });

  it('answers the account and sets an httpOnly, SameSite=Lax session cookie for 7 days', async () => {
    const response = await postLogin(
      { credential: GOOD_CREDENTIAL, csrfToken: 'csrf-1' },
      'g_csrf_token=csrf-1',
    );

    expect(response.status).toBe(200);
    expect(response.body).toEqual(STUB_ACCOUNT);
    const setCookie = response.headers.getSetCookie();
    expect(setCookie).toHaveLength(1);
    const attributes = setCookie[0]!.split(';').map((a) => a.trim());
    expect(attributes[0]).toMatch(/^platform\.sid=s%3A[\w-]+\.[\w%+/=-]+$/);
    expect(attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Lax']));
    expect(attributes.some((a) => a.toLowerCase() === 'secure')).toBe(false);
    const expires = Date.parse(
      attributes.find((a) => a.startsWith('Expires='))!.slice('Expires='.length),
    );
    expect(Math.abs(expires - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);
  });

  it('stores the account and the login time in Redis under the new session id, with a 7-day TTL', async () => {
    const before = Date.now();

    const { sessionId } = await gateway().logIn();

    const stored = JSON.parse((await gateway().redis.get(gateway().sessionKey(sessionId)))!);
    expect(stored).toMatchObject({ accountId: STUB_ACCOUNT.id, createdAt: expect.any(Number) });
    expect(stored.createdAt).toBeGreaterThanOrEqual(before);
    const ttl = await gateway().redis.pttl(gateway().sessionKey(sessionId));
    expect(ttl).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * DAY_MS);
  });

  it('forwards the body, the g_csrf_token cookie alone and the request id to auth', async () => {
    const before = gateway().stubs.auth.received.length;

    const response = await postLogin(
      { credential: GOOD_CREDENTIAL, csrfToken: 'csrf-2' },
      'theme=dark; g_csrf_token=csrf-2; platform.sid=s%3Aold.sig',
      { 'x-request-id': 'login-request-1', 'x-platform-identity': 'forged' },
    );

    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('login-request-1');
    const [received, ...more] = gateway().stubs.auth.received.slice(before);
    expect(more).toHaveLength(0);
    expect(received).toMatchObject({ method: 'POST', path: LOGIN_PATH, accountId: null });
    expect(JSON.parse(received!.body)).toEqual({
      credential: GOOD_CREDENTIAL,
      csrfToken: 'csrf-2',
    });
    expect(received!.headers.cookie).toBe('g_csrf_token=csrf-2');
    expect(received!.headers['x-request-id']).toBe('login-request-1');
    expect(received!.headers['x-platform-identity']).toBeUndefined();
  });

  it.each([
    [
      'a refused credential as 401',
      { credential: 'stolen', csrfToken: 'csrf-3' },
      'g_csrf_token=csrf-3',
      401,
      errorBody('UNAUTHORIZED', 'Invalid credential: login is required.'),
    ],
    [
      'a CSRF failure as 403',
      { credential: GOOD_CREDENTIAL, csrfToken: 'csrf-4' },
      'g_csrf_token=other',
      403,
      errorBody('CSRF_FAILED', 'The CSRF token does not match.'),
    ],
  ])(
    'passes %s through unchanged and creates no session',
    async (_case, body, cookie, status, error) => {
      const sessionsBefore = await gateway().keys('sess:*');

      const response = await postLogin(body, cookie);

      expect(response.status).toBe(status);
      expect(response.body).toEqual(error);
      expect(response.headers.getSetCookie()).toEqual([]);
      expect(await gateway().keys('sess:*')).toEqual(sessionsBefore);
    },
  );

  it('gives a new session id at login and destroys the session the request came with', async () => {
    const first = await gateway().logIn();

    const second = await gateway().logIn({ cookie: first.cookie });

    expect(second.sessionId).not.toBe(first.sessionId);
    expect(await gateway().redis.exists(gateway().sessionKey(first.sessionId))).toBe(0);
    expect(await gateway().redis.exists(gateway().sessionKey(second.sessionId))).toBe(1);
    expect((await gateway().request('/api/projects', { cookie: first.cookie })).status).toBe(401);
    expect((await gateway().request('/api/projects', { cookie: second.cookie })).status).toBe(200);
  });

  it('never adopts a session id chosen by the client', async () => {
    const { sessionId } = await gateway().logIn({ cookie: 'platform.sid=attacker-chosen-id' });

    expect(sessionId).not.toBe('attacker-chosen-id');
    expect(await gateway().redis.exists(gateway().sessionKey('attacker-chosen-id'))).toBe(0);
  });

  it('answers 400 INVALID_REQUEST to a body that is not JSON, without asking auth', async () => {
    const before = gateway().stubs.auth.received.length;

    const response = await postLogin('credential=x&csrfToken=y', 'g_csrf_token=y', {
      'content-type': 'application/x-www-form-urlencoded',
    });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody('INVALID_REQUEST'));
    expect(gateway().stubs.auth.received.length).toBe(before);
  });
});

describe('login while auth does not answer', () => {
  const gone = useRunning(startDroppingServer);
  const gateway = useRunning(() => startGateway({ AUTH_URL: gone().url }));

  it('answers 503 SERVICE_UNAVAILABLE as JSON and creates no session', async () => {
    const response = await gateway().request(LOGIN_PATH, {
      method: 'POST',
      body: { credential: GOOD_CREDENTIAL, csrfToken: 'c' },
      headers: { cookie: 'g_csrf_token=c' },
    });

    expect(response.status).toBe(503);
    expect(response.body).toEqual(errorBody('SERVICE_UNAVAILABLE'));
    expect(sessionCookieOf(response)).toBeNull();
    expect(await gateway().keys('sess:*')).toEqual([]);
  });
});
