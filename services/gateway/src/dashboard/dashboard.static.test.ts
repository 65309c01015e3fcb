import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorBody, useRunning } from '@platform/shared/testing';
import { startGateway } from '../test/start-gateway';

const INDEX = '<!doctype html><html><head><title>Platform</title></head><body></body></html>';

/** A dashboard build as vite lays it out: index.html and hashed files under assets/. */
function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), APP_JS);
  return dir;
}

const APP_JS = 'console.log("app");\n'.repeat(200);
const page = (url: string) => fetch(url, { headers: { accept: 'text/html,*/*;q=0.8' } });

describe('the dashboard at /', () => {
  const dir = fakeBuild();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = useRunning(() =>
    startGateway({ DEV_IDP_URL: 'http://127.0.0.1:9' }, { dashboardDir: dir }),
  );

  it.each(['/', '/projects/abc/services/def', '/sign-in?next=%2F'])(
    'answers the page %s with the app, its sign-in settings and a CSP without inline script',
    async (path) => {
      const response = await page(`${gateway().url}${path}`);
      const html = await response.text();

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(html).toContain('<title>Platform</title>');
      expect(html).toContain('<meta name="platform-dev-idp" content="/dev/">');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('accounts.google.com');
    },
  );

  it('serves hashed assets gzipped, to be cached for good', async () => {
    const response = await fetch(`${gateway().url}/assets/index-abc123.js`, {
      headers: { 'accept-encoding': 'gzip' },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(await response.text()).toBe(APP_JS); // fetch decompresses
    expect(response.headers.get('cache-control')).toContain('immutable');
  });

  it('leaves /api answers uncompressed (its event streams must flow line by line)', async () => {
    const response = await fetch(`${gateway().url}/api/openapi.json`, {
      headers: { 'accept-encoding': 'gzip' },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBeNull();
  });

  it('leaves OPTIONS of /api to the API (405 there), not answering it itself', async () => {
    const response = await fetch(`${gateway().url}/api/projects/anything`, { method: 'OPTIONS' });

    expect(response.status).toBe(405);
  });

  it('keeps the JSON 404 of an unknown /api path, a missing asset and a non-browser client', async () => {
    const api = await gateway().request('/api/nothing-here', { headers: { accept: 'text/html' } });
    const asset = await page(`${gateway().url}/assets/missing.js`);
    const json = await gateway().request('/nothing-here');

    expect(api.status).toBe(401); // /api asks for a session before it routes
    expect(asset.status).toBe(404);
    expect(await asset.json()).toEqual(errorBody('NOT_FOUND'));
    expect(json.status).toBe(404);
    expect(json.body).toEqual(errorBody('NOT_FOUND'));
  });
});

describe('the dashboard with Google sign-in (no dev-idp)', () => {
  const dir = fakeBuild();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = useRunning(() =>
    startGateway(
      { GOOGLE_CLIENT_ID: 'client-1.apps.googleusercontent.com' },
      { dashboardDir: dir },
    ),
  );

  it("names the client id and allows exactly Google's sign-in script and frame", async () => {
    const response = await page(`${gateway().url}/`);
    const html = await response.text();
    const csp = response.headers.get('content-security-policy')!;

    expect(html).toContain(
      '<meta name="platform-google-client-id" content="client-1.apps.googleusercontent.com">',
    );
    expect(html).not.toContain('platform-dev-idp');
    expect(csp).toContain("script-src 'self' https://accounts.google.com/gsi/client");
    expect(csp).toContain('frame-src https://accounts.google.com/gsi/');
  });
});

describe('the gateway without a dashboard build', () => {
  const gateway = useRunning(() => startGateway({}, { dashboardDir: '/nonexistent/dashboard' }));

  it('answers / with the JSON 404', async () => {
    const response = await page(`${gateway().url}/`);

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(errorBody('NOT_FOUND'));
  });
});
