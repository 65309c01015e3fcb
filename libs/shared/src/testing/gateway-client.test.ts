import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayClient } from './gateway-client';
import { startTestServer, useRunning } from './helpers';

/** What the stub gateway was last sent. */
const seen: { cookie?: string; body?: any } = {};

/** The gateway's sign-in in miniature: /dev/token, the login callback, /me and logout. */
async function stubGateway(req: IncomingMessage, res: ServerResponse) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  seen.cookie = req.headers.cookie;
  seen.body = raw ? JSON.parse(raw) : undefined;
  const answer = (status: number, body?: unknown, headers: Record<string, string> = {}) =>
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(body === undefined ? undefined : JSON.stringify(body));
  switch (`${req.method} ${req.url}`) {
    case 'POST /dev/token':
      return answer(200, { credential: `credential-of-${seen.body.email}` });
    case 'POST /api/accounts/google-auth-login-callback':
      if (!req.headers.cookie?.includes(`g_csrf_token=${seen.body.csrfToken}`)) {
        return answer(403, { error: 'CSRF_FAILED', message: 'The CSRF token does not match.' });
      }
      return answer(
        200,
        { id: 'acc-1', email: 'ada@example.com', name: 'Ada' },
        { 'set-cookie': 'platform.sid=s%3Aabc=; Path=/; HttpOnly' },
      );
    case 'GET /api/accounts/me':
      return answer(200, { id: 'acc-1' });
    case 'POST /api/accounts/logout':
      return answer(204, undefined, {
        'set-cookie': 'platform.sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
      });
    default:
      return answer(404, { error: 'NOT_FOUND', message: 'No such route.' });
  }
}

describe('GatewayClient', () => {
  const gateway = useRunning(() => startTestServer((req, res) => void stubGateway(req, res)));

  it('signs in with a credential and the double-submitted CSRF token, and keeps the session cookie', async () => {
    const client = new GatewayClient(gateway().url);

    const login = await client.signIn('ada@example.com', 'Ada');

    expect(login).toMatchObject({ status: 200, body: { id: 'acc-1', email: 'ada@example.com' } });
    expect(seen.body).toEqual({
      credential: 'credential-of-ada@example.com',
      csrfToken: client.cookie('g_csrf_token'),
    });
    expect(client.cookie('platform.sid')).toBe('s%3Aabc=');
  });

  it('sends the cookies it keeps, and forgets one the answer clears', async () => {
    const client = new GatewayClient(gateway().url);
    await client.signIn('ada@example.com', 'Ada');

    await client.get('/api/accounts/me');
    expect(seen.cookie).toBe(client.cookieHeader());
    expect(seen.cookie).toContain('platform.sid=s%3Aabc=');

    await client.post('/api/accounts/logout');
    expect(client.cookie('platform.sid')).toBeUndefined();
  });

  it('expect() answers the body of the expected status and throws with any other', async () => {
    const client = new GatewayClient(gateway().url);

    await expect(client.expect(200, 'GET', '/api/accounts/me')).resolves.toEqual({ id: 'acc-1' });
    await expect(client.expect(200, 'GET', '/nowhere')).rejects.toThrow(
      'GET /nowhere: 404 {"error":"NOT_FOUND","message":"No such route."}',
    );
  });
});
