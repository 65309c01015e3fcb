import { createHash } from 'node:crypto';
import { useRunning } from '@platform/shared/testing';
import { startDevIdp } from '../test/start-dev-idp';

describe('GET / (the sign-in page)', () => {
  const idp = useRunning(startDevIdp);

  it('serves an HTML page with the elements a browser test drives', async () => {
    const response = await fetch(`${idp().url}/`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    for (const id of ['email', 'name', 'sign-in', 'me', 'projects', 'error']) {
      expect(html).toContain(`id="${id}"`);
    }
  });

  it('posts the credential and a double-submitted CSRF token to the gateway login callback', async () => {
    const html = await (await fetch(`${idp().url}/`)).text();

    expect(html).toContain("call('POST', 'token'");
    expect(html).toContain("'g_csrf_token=' + csrfToken + '; path=/");
    expect(html).toContain(
      "call('POST', '/api/accounts/google-auth-login-callback', { credential, csrfToken })",
    );
    expect(html).toContain("call('GET', '/api/accounts/me')");
    expect(html).toContain("call('GET', '/api/projects')");
  });

  it('allows exactly its own inline script through its Content-Security-Policy', async () => {
    const response = await fetch(`${idp().url}/`);
    const html = await response.text();
    const script = html.match(/<script>([\s\S]*)<\/script>/)?.[1] ?? '';
    const hash = createHash('sha256').update(script).digest('base64');

    expect(response.headers.get('content-security-policy')).toContain(
      `script-src 'sha256-${hash}'`,
    );
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
