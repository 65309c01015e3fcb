import { randomBytes } from 'node:crypto';
import {
  startDroppingServer,
  errorBody,
  useRunning,
  validationErrorAt,
} from '@platform/shared/testing';
import { createSigningKey, mintIdToken } from '../../../../tools/dev-idp/src/tokens';
import { postLogin, startAuth, uniqueSubject } from '../test/start-auth';

const csrf = () => randomBytes(16).toString('hex');

describe('POST /api/accounts/google-auth-login-callback', () => {
  const auth = useRunning(() => startAuth());

  const validCredential = (claims: { sub?: string; email?: string; name?: string } = {}) =>
    auth().idp.mint({
      sub: uniqueSubject(),
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      ...claims,
    });

  it('creates the account at the first login and answers exactly {id, email, name}', async () => {
    const sub = uniqueSubject();
    const before = Date.now();

    const response = await postLogin(auth(), {
      credential: validCredential({ sub, email: 'ada@example.com', name: 'Ada Lovelace' }),
      csrfToken: csrf(),
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      email: 'ada@example.com',
      name: 'Ada Lovelace',
    });
    const stored = await auth().accounts.findOne({ sub }).lean();
    expect(stored).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(stored?._id.toHexString()).toBe(response.body.id);
    expect(stored?.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('logs the same Google subject into the same account and refreshes its e-mail and name', async () => {
    const sub = uniqueSubject();
    const first = await postLogin(auth(), {
      credential: validCredential({ sub, email: 'old@example.com', name: 'Old Name' }),
      csrfToken: csrf(),
    });
    const createdAt = (await auth().accounts.findOne({ sub }).lean())?.createdAt;

    const second = await postLogin(auth(), {
      credential: validCredential({ sub, email: 'new@example.com', name: 'New Name' }),
      csrfToken: csrf(),
    });

    expect(second.status).toBe(200);
    expect(second.body).toEqual({ id: first.body.id, email: 'new@example.com', name: 'New Name' });
    const stored = await auth().accounts.find({ sub }).lean();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ email: 'new@example.com', name: 'New Name', createdAt });
  });

  it('keeps a single account when eight first logins of a subject race each other', async () => {
    const sub = uniqueSubject();

    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        postLogin(auth(), { credential: validCredential({ sub }), csrfToken: csrf() }),
      ),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    const [first] = responses;
    for (const response of responses) {
      expect(response.body).toEqual({
        id: first!.body.id,
        email: 'ada@example.com',
        name: 'Ada Lovelace',
      });
    }
    const stored = await auth().accounts.find({ sub }).lean();
    expect(stored).toHaveLength(1);
    expect(stored[0]?._id.toHexString()).toBe(first!.body.id);
  });

  it('accepts the issuer written without its scheme, as Google also issues it', async () => {
    const sub = uniqueSubject();

    const response = await postLogin(auth(), {
      credential: auth().idp.mint(
        { sub, email: 'ada@example.com', name: 'Ada' },
        { issuer: 'accounts.google.com' },
      ),
      csrfToken: csrf(),
    });

    expect(response.status).toBe(200);
    expect(await auth().accounts.countDocuments({ sub })).toBe(1);
  });

  describe('rejects a credential that is not a valid Google ID token for this client', () => {
    const claims = (sub: string) => ({ sub, email: 'mallory@example.com', name: 'Mallory' });
    const cases: [string, (sub: string) => string][] = [
      ['expired', (sub) => auth().idp.mint(claims(sub), { expired: true })],
      [
        'for another audience',
        (sub) => auth().idp.mint(claims(sub), { audience: 'another-client' }),
      ],
      [
        'from another issuer',
        (sub) => auth().idp.mint(claims(sub), { issuer: 'https://evil.example' }),
      ],
      [
        'signed by another key under the same kid',
        (sub) =>
          mintIdToken(createSigningKey(auth().idp.key.kid), claims(sub), {
            audience: auth().idp.clientId,
          }),
      ],
      [
        'signed by an unknown key',
        (sub) => mintIdToken(createSigningKey(), claims(sub), { audience: auth().idp.clientId }),
      ],
      ['unsigned (alg none)', (sub) => auth().idp.mint(claims(sub), { algNone: true })],
      ['garbage', () => 'not-a-token'],
      ['three segments of garbage', () => 'abc.def.ghi'],
    ];

    it.each(cases)(
      'answers 401 UNAUTHORIZED to a token %s and creates no account',
      async (_case, make) => {
        const sub = uniqueSubject();

        const response = await postLogin(auth(), { credential: make(sub), csrfToken: csrf() });

        expect(response.status).toBe(401);
        expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
        expect(await auth().accounts.countDocuments({ sub })).toBe(0);
      },
    );
  });

  it.each([
    ['the token does not match the g_csrf_token cookie', csrf(), undefined],
    ['the g_csrf_token cookie is missing', null, /g_csrf_token/],
  ])('answers 403 CSRF_FAILED when %s', async (_case, cookie, message) => {
    const sub = uniqueSubject();

    const response = await postLogin(
      auth(),
      { credential: validCredential({ sub }), csrfToken: csrf() },
      cookie,
    );

    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorBody('CSRF_FAILED', message));
    expect(await auth().accounts.countDocuments({ sub })).toBe(0);
  });

  it('checks the CSRF token before the credential', async () => {
    const response = await postLogin(
      auth(),
      { credential: 'not-a-token', csrfToken: csrf() },
      csrf(),
    );

    expect(response.status).toBe(403);
    expect(response.body.error).toBe('CSRF_FAILED');
  });

  it.each([
    ['an unknown field', { credential: 'x', csrfToken: 'y', admin: true }, 'admin'],
    ['a missing credential', { csrfToken: 'y' }, 'credential'],
    ['a non-string csrfToken', { credential: 'x', csrfToken: { $ne: '' } }, 'csrfToken'],
  ])('answers 400 VALIDATION_ERROR to a body with %s', async (_case, body, path) => {
    const response = await postLogin(auth(), body, 'y');

    expect(response.status).toBe(400);
    expect(response.body).toEqual(validationErrorAt(path));
  });

  it('answers 400 INVALID_REQUEST to a body that is not JSON', async () => {
    const response = await fetch(`${auth().url}/api/accounts/google-auth-login-callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'g_csrf_token=y' },
      body: 'credential=x&csrfToken=y',
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(errorBody('INVALID_REQUEST'));
  });
});

describe('login while the certificate endpoint does not answer', () => {
  const gone = useRunning(startDroppingServer);
  const auth = useRunning(() => startAuth({ certsUrl: `${gone().url}/oauth2/v1/certs` }));

  it('answers 503 SERVICE_UNAVAILABLE rather than rejecting a valid credential', async () => {
    const sub = uniqueSubject();
    const token = auth().idp.mint({ sub, email: 'ada@example.com', name: 'Ada' });

    const response = await postLogin(auth(), { credential: token, csrfToken: 'same' }, 'same');

    expect(response.status).toBe(503);
    expect(response.body).toEqual(errorBody('SERVICE_UNAVAILABLE'));
    expect(await auth().accounts.countDocuments({ sub })).toBe(0);
  });
});
