import { errorBody, useRunning } from '@platform/shared/testing';
import { startDevIdp } from '../../../../tools/dev-idp/src/test/start-dev-idp';
import { startGateway } from '../test/start-gateway';

const idp = useRunning(startDevIdp);

describe('/dev/ (dev-idp through the gateway)', () => {
  const gateway = useRunning(() => startGateway({ DEV_IDP_URL: idp().url }));

  it('serves the sign-in page on the gateway origin with dev-idp’s own script policy', async () => {
    const response = await fetch(`${gateway().url}/dev/`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    for (const id of ['email', 'name', 'sign-in', 'me', 'projects', 'error'])
      expect(html).toContain(`id="${id}"`);
    const policy = response.headers.get('content-security-policy');
    expect(policy).toMatch(/^default-src 'none'; script-src 'sha256-[\w+/=]+';/);
    expect(policy).not.toContain("script-src 'self'");
  });

  it('redirects /dev to /dev/ so the page’s relative links resolve under /dev/', async () => {
    const response = await fetch(`${gateway().url}/dev`, { redirect: 'manual' });

    expect(response.status).toBe(308);
    expect(response.headers.get('location')).toBe('/dev/');
  });

  it('mints a credential at /dev/token', async () => {
    const response = await gateway().request('/dev/token', {
      method: 'POST',
      body: { email: 'ada@example.com', name: 'Ada' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      credential: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
  });

  it('does not route paths that merely start with /dev', async () => {
    const response = await gateway().request('/devices');

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND'));
  });
});

describe('/dev/ in production', () => {
  // A production gateway refuses to start with DEV_IDP_URL at all (config.test.ts).
  const gateway = useRunning(() => startGateway({ NODE_ENV: 'production' }));

  it('is not there', async () => {
    const page = await gateway().request('/dev/');
    const token = await gateway().request('/dev/token', {
      method: 'POST',
      body: { email: 'a@example.com', name: 'A' },
    });

    expect(page.status).toBe(404);
    expect(page.body).toEqual(errorBody('NOT_FOUND'));
    expect(token.status).toBe(404);
  });

  it('refuses to start with DEV_IDP_URL set', async () => {
    await expect(startGateway({ NODE_ENV: 'production', DEV_IDP_URL: idp().url })).rejects.toThrow(
      /DEV_IDP_URL/,
    );
  });
});
