import { errorBody, requestJson, useRunning, type TestIdentity } from '@platform/shared/testing';
import { postLogin, startAuth, uniqueSubject } from '../test/start-auth';

const auth = useRunning(() => startAuth());

describe('GET /api/accounts/me', () => {
  async function buildAccount(email = 'grace@example.com', name = 'Grace Hopper') {
    const response = await postLogin(auth(), {
      credential: auth().idp.mint({ sub: uniqueSubject(), email, name }),
      csrfToken: 'csrf-value',
    });
    return response.body as { id: string; email: string; name: string };
  }

  const getMe = (identity?: Partial<TestIdentity> & { accountId: string }) =>
    requestJson(`${auth().url}/api/accounts/me`, {
      identity: identity && { audience: 'auth', ...identity },
    });

  it('returns the account of the identity with exactly id, email, name and createdAt', async () => {
    const account = await buildAccount('grace@example.com', 'Grace Hopper');
    const stored = await auth().accounts.findById(account.id).lean();

    const response = await getMe({ accountId: account.id });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: account.id,
      email: 'grace@example.com',
      name: 'Grace Hopper',
      createdAt: stored?.createdAt.toISOString(),
    });
  });

  it('answers 401 to a request without the identity header, as when the port is reached directly', async () => {
    const response = await getMe();

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
  });

  it('answers 401 to an identity signed with another secret', async () => {
    const account = await buildAccount();

    const response = await getMe({
      accountId: account.id,
      secret: 'another-secret-that-is-at-least-32-characters',
    });

    expect(response.status).toBe(401);
    expect(response.body.error).toBe('UNAUTHORIZED');
  });

  it('answers 401 to an identity made for another service', async () => {
    const account = await buildAccount();

    const response = await getMe({ accountId: account.id, audience: 'projects' });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it.each([
    ['an account that does not exist', 'aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['a malformed account id', 'not-an-object-id'],
  ])('answers 401 to a valid identity for %s', async (_case, accountId) => {
    const response = await getMe({ accountId });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
  });
});

describe('auth health', () => {
  it('answers /readyz without an identity once MongoDB answers', async () => {
    const response = await requestJson(`${auth().url}/readyz`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: { mongo: 'ok' } });
  });
});
