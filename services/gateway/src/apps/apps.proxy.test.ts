import { request, type IncomingHttpHeaders } from 'node:http';
import { startDroppingServer, startTestServer, useRunning } from '@platform/shared/testing';
import { startGateway, type LoggedIn } from '../test/start-gateway';
import { serviceOfAppHost } from './apps.proxy';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyLength: number;
}

/** Stands in for the runtime's router: records each request and answers as an app would. */
async function startStubRouter() {
  const received: Received[] = [];
  const server = await startTestServer((req, res) => {
    let bodyLength = 0;
    req.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyLength });
      if (req.url === '/cookies') {
        res.setHeader('set-cookie', [
          'platform.sid=s%3Atossed.sig; Path=/; Domain=localhost',
          '__Host-platform.sid=s%3Atossed.sig; Path=/; Secure',
          'g_csrf_token=tossed; Path=/',
          'theme=dark; Path=/',
        ]);
      }
      res.writeHead(201, { 'content-type': 'application/json', 'x-app': 'yes' });
      res.end(JSON.stringify({ host: req.headers.host, url: req.url, bodyLength }));
    });
  });
  return { url: server.url, received, close: () => server.close() };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request to the gateway with this Host, as a browser at `http://<host>/` sends it. */
function send(
  gatewayUrl: string,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${gatewayUrl}${path}`,
      { method: init.method ?? 'GET', headers: { ...init.headers, host } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('serviceOfAppHost', () => {
  it.each([
    ['abc123.localhost:8080', 'abc123'],
    ['ABC123.LOCALHOST', 'abc123'],
    ['my-svc.localhost', 'my-svc'],
    ['localhost:8080', null],
    ['.localhost', null],
    ['a.b.localhost', null],
    ['abc.localhost.evil.example', null],
    ['127.0.0.1:8080', null],
    [undefined, null],
  ])('reads %j as %j', (host, expected) => {
    expect(serviceOfAppHost(host, '.localhost')).toBe(expected);
  });
});

describe('tenant apps behind the gateway', () => {
  const router = useRunning(startStubRouter);
  const gateway = useRunning(() => startGateway({ RUNTIME_ROUTER_URL: router().url }));
  let session: LoggedIn;
  beforeAll(async () => {
    session = await gateway().logIn();
  });

  const lastReceived = () => router().received.at(-1)!;

  it('forwards any path of an app host to the router with the Host, path and query unchanged, and passes its answer through', async () => {
    const answer = await send(gateway().url, 'abc123.localhost:8080', '/some/page?x=1&y=2');

    expect(answer.status).toBe(201);
    expect(answer.headers['x-app']).toBe('yes');
    expect(JSON.parse(answer.body)).toEqual({
      host: 'abc123.localhost:8080',
      url: '/some/page?x=1&y=2',
      bodyLength: 0,
    });
  });

  it("sends an app host's /api, /healthz and /dev paths to the app, not to the platform", async () => {
    const before = router().received.length;
    for (const path of ['/api/projects', '/healthz', '/api/openapi.json', '/dev/']) {
      const answer = await send(gateway().url, 'abc123.localhost', path);
      expect({ path, status: answer.status }).toEqual({ path, status: 201 });
    }
    expect(
      router()
        .received.slice(before)
        .map((r) => r.url),
    ).toEqual(['/api/projects', '/healthz', '/api/openapi.json', '/dev/']);
    expect(gateway().stubs.projects.received.map((r) => r.path)).not.toContain('/api/projects');
  });

  it("applies none of the API's session, Origin check, rate limit or security headers to an app", async () => {
    const answer = await send(gateway().url, 'abc123.localhost', '/api/projects', {
      method: 'POST',
      headers: { origin: 'https://elsewhere.example', 'content-type': 'text/plain' },
      body: 'not json',
    });

    expect(answer.status).toBe(201);
    expect(Object.keys(answer.headers).filter((h) => /^ratelimit|^retry-after/.test(h))).toEqual(
      [],
    );
    expect(answer.headers['content-security-policy']).toBeUndefined();
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("never forwards the platform's cookies or x-platform-* headers, and replaces the client's forwarding claims", async () => {
    await send(gateway().url, 'abc123.localhost:8080', '/', {
      headers: {
        cookie: `theme=dark; ${session.cookie}; g_csrf_token=abc; __Host-platform.sid=s%3Ax.y; cart=a%20b`,
        'x-platform-identity': 'v1.forged.signature',
        'x-platform-anything': 'x',
        'x-forwarded-for': '10.0.0.1',
        'x-forwarded-host': 'evil.example',
        forwarded: 'for=10.0.0.1',
      },
    });

    const { headers } = lastReceived();
    expect(headers.cookie).toBe('theme=dark; cart=a%20b');
    expect(Object.keys(headers).filter((h) => h.startsWith('x-platform-'))).toEqual([]);
    expect(headers.forwarded).toBeUndefined();
    expect(headers['x-forwarded-for']).toMatch(/127\.0\.0\.1$/);
    expect(headers['x-forwarded-host']).toBe('abc123.localhost:8080');
    expect(headers['x-forwarded-proto']).toBe('http');
  });

  it('sends no Cookie header when the platform cookies were all there was', async () => {
    await send(gateway().url, 'abc123.localhost', '/', { headers: { cookie: session.cookie } });

    expect(lastReceived().headers.cookie).toBeUndefined();
  });

  it("drops an app's Set-Cookie for the platform's cookies and keeps its own", async () => {
    const answer = await send(gateway().url, 'abc123.localhost', '/cookies');

    expect(answer.headers['set-cookie']).toEqual(['theme=dark; Path=/']);
  });

  it("streams a body larger than the API's limit to the app unparsed", async () => {
    const body = 'x'.repeat(2 * 1024 * 1024);
    const answer = await send(gateway().url, 'abc123.localhost', '/upload', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body,
    });

    expect(answer.status).toBe(201);
    expect(lastReceived()).toMatchObject({ method: 'PUT', bodyLength: body.length });
  });

  it('leaves hosts that are not app hosts to the platform', async () => {
    const before = router().received.length;

    const health = await send(gateway().url, 'localhost:8080', '/healthz');
    const api = await send(gateway().url, '127.0.0.1:8080', '/api/projects');

    expect(health.status).toBe(200);
    expect(api.status).toBe(401);
    expect(router().received.length).toBe(before);
  });

  it.each([['a.b.localhost'], ['-x.localhost'], ['x_y.localhost:8080']])(
    'answers 404 for %s, under the apps’ domain but naming no service: neither app nor platform',
    async (host) => {
      const before = router().received.length;

      for (const path of ['/metrics', '/readyz', '/api/projects']) {
        const answer = await send(gateway().url, host, path);
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'NOT_FOUND' });
      }
      expect(router().received.length).toBe(before);
    },
  );
});

describe('tenant apps when the router does not answer', () => {
  const dropping = useRunning(startDroppingServer);
  const gateway = useRunning(() => startGateway({ RUNTIME_ROUTER_URL: dropping().url }));

  it('answers 502 with a JSON error', async () => {
    const answer = await send(gateway().url, 'abc123.localhost', '/');

    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'BAD_GATEWAY',
      message: 'The app is not reachable right now: retry shortly.',
    });
  });
});

describe('a gateway with another APPS_HOST_SUFFIX', () => {
  const router = useRunning(startStubRouter);
  const gateway = useRunning(() =>
    startGateway({ RUNTIME_ROUTER_URL: router().url, APPS_HOST_SUFFIX: '.apps.example.test' }),
  );

  it('routes hosts under that suffix only, and leaves .localhost ones to the platform', async () => {
    const app = await send(gateway().url, 'abc123.apps.example.test', '/');
    const local = await send(gateway().url, 'abc123.localhost', '/healthz');

    expect(app.status).toBe(201);
    expect(local.status).toBe(200);
    expect(router().received.map((r) => r.headers.host)).toEqual(['abc123.apps.example.test']);
  });
});
