import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { startTestServer, testLogger, waitFor, type TestServer } from '@platform/shared/testing';
import { createRouter, type RoutedRelease } from './router';

/** A release the router can reach at `app`, counting its requests. */
function releaseAt(app: TestServer, serviceId: string) {
  const { hostname, port } = new URL(app.url);
  const release = {
    spec: { serviceId, releaseId: `${serviceId}-r1` },
    pick: () => ({ host: hostname, port: Number(port) }),
    agent: new Agent({ keepAlive: true }),
    inflight: 0,
    requestStarted: () => void release.inflight++,
    requestFinished: () => void release.inflight--,
  } satisfies RoutedRelease & { inflight: number };
  return release;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends a request to the router as the given Host, with raw headers. */
function send(
  router: TestServer,
  host: string,
  init: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${router.url}${init.path ?? '/'}`,
      { method: init.method ?? 'GET', headers: { host, ...init.headers }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('the runtime router', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  async function start(...args: Parameters<typeof startTestServer>) {
    const server = await startTestServer(...args);
    servers.push(server);
    return server;
  }
  function startRouter(releases: Record<string, RoutedRelease>) {
    return start(createRouter((serviceId) => releases[serviceId], testLogger('router')));
  }

  it("forwards method, path, body and end-to-end headers both ways, and neither side's hop-by-hop headers", async () => {
    let received: { method: string; url: string; headers: IncomingHttpHeaders; body: string };
    const app = await start((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received = { method: req.method!, url: req.url!, headers: req.headers, body };
        res.writeHead(201, {
          'content-type': 'text/plain',
          connection: 'keep-alive, x-app-private',
          'x-app-private': 'hop',
          'proxy-authenticate': 'Basic',
          'x-app': 'kept',
        });
        res.end('made');
      });
    });
    const router = await startRouter({ svc1: releaseAt(app, 'svc1') });

    const answer = await send(router, 'svc1.localhost:8080', {
      method: 'POST',
      path: '/things?x=1',
      headers: {
        'content-type': 'text/plain',
        connection: 'x-private',
        'x-private': 'hop',
        'proxy-authorization': 'Basic c2VjcmV0',
        'x-client': 'kept',
      },
      body: 'a body',
    });

    expect(answer).toMatchObject({ status: 201, body: 'made' });
    expect(answer.headers['x-app']).toBe('kept');
    expect(answer.headers).not.toHaveProperty('x-app-private');
    expect(answer.headers).not.toHaveProperty('proxy-authenticate');
    expect(received!).toMatchObject({ method: 'POST', url: '/things?x=1', body: 'a body' });
    expect(received!.headers).toMatchObject({ host: 'svc1.localhost:8080', 'x-client': 'kept' });
    expect(received!.headers).not.toHaveProperty('x-private');
    expect(received!.headers).not.toHaveProperty('proxy-authorization');
  });

  it('answers 404 JSON when the Host names no service or one without a live release', async () => {
    const router = await startRouter({});

    for (const host of ['svc2.localhost', 'localhost']) {
      const answer = await send(router, host);
      expect(answer.status).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'NOT_FOUND' });
    }
  });

  it('answers 502 JSON when the live release does not answer', async () => {
    const gone = await startTestServer(() => {});
    const release = releaseAt(gone, 'svc3');
    await gone.close();
    const router = await startRouter({ svc3: release });

    const answer = await send(router, 'svc3.localhost');

    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'BAD_GATEWAY',
      message: 'The live deployment of service svc3 did not answer.',
    });
    expect(release.inflight).toBe(0);
  });

  it('counts each request against its release until its answer is over', async () => {
    const held: (() => void)[] = [];
    const app = await start((_req, res) => held.push(() => res.end('done')));
    const release = releaseAt(app, 'svc4');
    const router = await startRouter({ svc4: release });

    const answers = [send(router, 'svc4.localhost'), send(router, 'svc4.localhost')];
    await waitFor(() => held.length === 2, { what: 'the app to hold both requests' });
    expect(release.inflight).toBe(2);
    for (const answer of held) answer();

    expect((await Promise.all(answers)).map((a) => a.body)).toEqual(['done', 'done']);
    await waitFor(() => release.inflight === 0, { what: 'both requests to be counted out' });
  });
});
