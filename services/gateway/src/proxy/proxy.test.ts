import { request as httpRequest } from 'node:http';
import express from 'express';
import mongoose from 'mongoose';
import {
  accountIdOf,
  createServiceApp,
  signIdentity,
  verifyIdentity,
  type ServiceName,
} from '@platform/shared';
import {
  startDroppingServer,
  TEST_INTERNAL_SECRET,
  errorBody,
  startTestServer,
  testLogger,
  useRunning,
  waitFor,
  type TestServer,
} from '@platform/shared/testing';
import { LOGIN_PATH } from '../login/auth-login';
import { startGateway, type LoggedIn, type TestGateway } from '../test/start-gateway';
import { STUB_ACCOUNT, STUB_PATHS, stubLogin, type StubService } from '../test/stubs';
import { setTimeout as delay } from 'node:timers/promises';

const LIST_PROJECTS = { aud: 'projects', method: 'GET', path: '/api/projects' } as const;

/** Requests of every service, each with the service that must get it. */
const ROUTES = [
  ['GET', '/api/accounts/me', 'auth'],
  ['GET', '/api/projects', 'projects'],
  ['GET', '/api/projects?limit=2&cursor=abc', 'projects'],
  ['PATCH', '/api/projects/p1', 'projects'],
  ['DELETE', '/api/projects/p1', 'projects'],
  ['DELETE', '/api/projects/p1/services/s1', 'projects'],
  ['GET', '/api/projects/p1/services/s1/deployments', 'deployments'],
  ['POST', '/api/projects/p1/services/s1/deployments', 'deployments'],
  ['GET', '/api/projects/p1/services/s1/deployments/d1?wait=1', 'deployments'],
  ['POST', '/api/projects/p1/services/s1/deployments/d1/cancel', 'deployments'],
  ['GET', '/api/projects/p1/webhooks', 'webhooks'],
  ['PATCH', '/api/projects/p1/webhooks/w1', 'webhooks'],
  ['POST', '/api/projects/p1/webhooks/w1/deliveries/x1/redeliver', 'webhooks'],
] as const;

const bodyFor = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});

describe('proxying /api to the services', () => {
  const gateway = useRunning(() =>
    startGateway({ ALLOWED_ORIGINS: 'http://localhost:8080,https://app.example.com' }),
  );
  let session: LoggedIn;
  beforeAll(async () => {
    session = await gateway().logIn();
  });

  /** Sends a request with the session and returns the answer and what `stub` received for it. */
  async function through(
    stub: StubService,
    path: string,
    init: Parameters<TestGateway['request']>[1] = {},
  ) {
    const before = stub.received.length;
    const response = await gateway().request(path, { cookie: session.cookie, ...init });
    return { response, received: stub.received.slice(before) };
  }

  it.each(ROUTES)('sends %s %s to %s with the path unchanged', async (method, path, upstream) => {
    const { response, received } = await through(gateway().stubs[upstream], path, {
      method,
      body: bodyFor(method),
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ service: upstream, method, path });
    expect(received).toEqual([
      expect.objectContaining({ method, path, accountId: STUB_ACCOUNT.id }),
    ]);
  });

  it('replaces client identity, forwarding and cookie headers with a signed identity and the request id', async () => {
    const { response, received } = await through(gateway().stubs.projects, '/api/projects', {
      headers: {
        'x-platform-identity': 'v1.forged.signature',
        'x-forwarded-for': '10.0.0.1',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'https',
        forwarded: 'for=10.0.0.1',
        'x-request-id': 'trace-me-1',
      },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('trace-me-1');
    const headers = received[0]!.headers;
    expect(
      Object.keys(headers).filter((h) => h.startsWith('x-forwarded-') || h === 'forwarded'),
    ).toEqual([]);
    expect(headers.cookie).toBeUndefined();
    expect(headers['x-request-id']).toBe('trace-me-1');
    expect(
      verifyIdentity(headers['x-platform-identity'] as string, TEST_INTERNAL_SECRET, LIST_PROJECTS),
    ).toBe(STUB_ACCOUNT.id);
  });

  it('ignores an identity the client signed itself for another account', async () => {
    const { received } = await through(gateway().stubs.projects, '/api/projects', {
      headers: {
        'x-platform-identity': signIdentity(
          '65f0000000000000000000ff',
          LIST_PROJECTS,
          TEST_INTERNAL_SECRET,
        ),
      },
    });

    expect(received[0]!.accountId).toBe(STUB_ACCOUNT.id);
  });

  it('forwards a JSON body just under 100 KiB intact', async () => {
    const body = { name: 'big', description: 'x'.repeat(100 * 1024 - 100) };

    const { response, received } = await through(gateway().stubs.projects, '/api/projects', {
      method: 'POST',
      body,
    });

    expect(response.status).toBe(200);
    expect(JSON.parse(received[0]!.body)).toEqual(body);
    expect(received[0]!.headers['content-length']).toBe(
      String(Buffer.byteLength(received[0]!.body)),
    );
  });

  it.each([
    [
      '413 PAYLOAD_TOO_LARGE to a body over 100 KiB',
      413,
      'PAYLOAD_TOO_LARGE',
      { method: 'POST', body: { name: 'big', description: 'x'.repeat(100 * 1024 + 1) } },
    ],
    [
      '400 INVALID_REQUEST to a body that is not JSON',
      400,
      'INVALID_REQUEST',
      { method: 'POST', body: 'name=x', headers: { 'content-type': 'text/plain' } },
    ],
    [
      '400 INVALID_REQUEST to malformed JSON',
      400,
      'INVALID_REQUEST',
      { method: 'POST', body: '{"name":' },
    ],
    [
      '403 FORBIDDEN to a state-changing request from an origin that is not allowed',
      403,
      'FORBIDDEN',
      { method: 'POST', body: { name: 'x' }, headers: { origin: 'https://evil.example' } },
    ],
  ])('answers %s without reaching the service', async (_case, status, error, init) => {
    const { response, received } = await through(gateway().stubs.projects, '/api/projects', init);

    expect(response.status).toBe(status);
    expect(response.body).toEqual(errorBody(error));
    expect(received).toEqual([]);
  });

  it.each([
    ['an allowed origin', { origin: 'https://app.example.com' }, 'POST'],
    ['no Origin header', {}, 'POST'],
    ['a read from any origin', { origin: 'https://evil.example' }, 'GET'],
  ])('lets through a request with %s', async (_case, headers, method) => {
    const { response, received } = await through(gateway().stubs.projects, '/api/projects', {
      method,
      headers,
      body: method === 'POST' ? { name: 'x' } : undefined,
    });

    expect(response.status).toBe(200);
    expect(received).toHaveLength(1);
  });

  it('passes a service error through unchanged', async () => {
    const { response } = await through(gateway().stubs.projects, STUB_PATHS.conflict, {
      method: 'PATCH',
      body: {},
    });

    expect(response.status).toBe(409);
    expect(response.body).toEqual(errorBody('CONFLICT', 'Name taken.'));
    expect(response.headers.get('x-stub')).toBe('conflict');
  });

  /** A GET with the path exactly as given: fetch would normalise dot segments away. */
  function rawGet(path: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${gateway().url}${path}`,
        { headers: { cookie: session.cookie } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it.each([
    '/api/unknown',
    '/internal/projects/p1',
    '/api/projects/p1/../../internal/projects/p1',
    '/api/projects/p1/%2e%2e/%2E%2E/internal/projects/p1',
    '/api/projects/p1%2F..%2F..%2Finternal',
  ])('answers 404 NOT_FOUND to %s and routes it nowhere', async (path) => {
    const total = () => Object.values(gateway().stubs).reduce((n, s) => n + s.received.length, 0);
    const before = total();

    const response = await rawGet(path);

    expect(response).toEqual({
      status: 404,
      body: errorBody('NOT_FOUND'),
    });
    expect(total()).toBe(before);
  });
});

describe('proxying when a service does not answer', () => {
  const gone = useRunning(startDroppingServer);
  const gateway = useRunning(() =>
    startGateway({ DEPLOYMENTS_URL: gone().url, UPSTREAM_TIMEOUT_MS: '300' }),
  );
  let session: LoggedIn;
  beforeAll(async () => {
    session = await gateway().logIn();
  });

  it('answers 503 SERVICE_UNAVAILABLE as JSON when the service refuses connections', async () => {
    const response = await gateway().request('/api/projects/p1/services/s1/deployments', {
      cookie: session.cookie,
    });

    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual(errorBody('SERVICE_UNAVAILABLE', /deployments/));
  });

  it('answers 503 SERVICE_UNAVAILABLE when the service takes longer than the upstream timeout', async () => {
    const started = Date.now();

    const response = await gateway().request(STUB_PATHS.hang, { cookie: session.cookie });

    expect(response.status).toBe(503);
    expect(response.body).toEqual(errorBody('SERVICE_UNAVAILABLE', /projects/));
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('requests in flight to a service', () => {
  it('are at most UPSTREAM_CONCURRENCY; the others wait their turn and arrive whole, signed', async () => {
    let inFlight = 0;
    let most = 0;
    const received: { method: string; identity: unknown; cookie: unknown; body: string }[] = [];
    const slow = await startTestServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({
          method: req.method!,
          identity: req.headers['x-platform-identity'],
          cookie: req.headers.cookie,
          body,
        });
        setTimeout(() => {
          inFlight--;
          res.setHeader('content-type', 'application/json');
          res.end('{"ok":true}');
        }, 100);
      });
    });
    const gateway = await startGateway({ PROJECTS_URL: slow.url, UPSTREAM_CONCURRENCY: '2' });
    try {
      const session = await gateway.logIn();
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          gateway.request('/api/projects', {
            method: i % 2 ? 'POST' : 'GET',
            body: i % 2 ? { name: `project ${i}` } : undefined,
            cookie: session.cookie,
          }),
        ),
      );

      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(most).toBe(2);
      // Those that waited were prepared like the first: body, identity, no client cookie.
      expect(received.map((r) => r.body).sort()).toEqual([
        '',
        '',
        '',
        '{"name":"project 1"}',
        '{"name":"project 3"}',
        '{"name":"project 5"}',
      ]);
      for (const r of received) {
        const target = { ...LIST_PROJECTS, method: r.method };
        expect(verifyIdentity(String(r.identity), TEST_INTERNAL_SECRET, target)).toBe(
          STUB_ACCOUNT.id,
        );
        expect(r.cookie).toBeUndefined();
      }
    } finally {
      await gateway.close();
      await slow.close();
    }
  });
});

describe('a request that asks to wait (?wait=N)', () => {
  it('outlasts the upstream timeout and takes no turn from the others', async () => {
    // The service holds `?wait=` requests until released, and answers the others at once.
    const held: (() => void)[] = [];
    const service = await startTestServer((req, res) => {
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ url: req.url }));
      };
      if (req.url?.includes('wait=')) held.push(answer);
      else answer();
    });
    const gateway = await startGateway({
      DEPLOYMENTS_URL: service.url,
      UPSTREAM_TIMEOUT_MS: '300',
      UPSTREAM_CONCURRENCY: '1',
    });
    try {
      const session = await gateway.logIn();
      const path = '/api/projects/p1/services/s1/deployments/d1';
      const waiting = gateway.request(`${path}?wait=60`, { cookie: session.cookie });
      await waitFor(() => held.length === 1, { what: 'the service to hold the request' });

      // Past the 300 ms timeout, with the only turn free for the next request.
      const other = await gateway.request(path, { cookie: session.cookie });
      expect(other.status).toBe(200);
      // Let the 300 ms upstream timeout pass while the service still holds it.
      await delay(400);
      held[0]!();
      const answer = await waiting;

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ url: `${path}?wait=60` });
    } finally {
      await gateway.close();
      await service.close();
    }
  });
});

describe("the signed identity, as the services' own verification takes it", () => {
  /**
   * A service app as every service builds it (`createServiceApp`, so `requireIdentity`) named
   * `name`, answering who it was asked by and what; auth's also logs in like the stub.
   */
  const serviceApp = (name: ServiceName) =>
    startTestServer(
      createServiceApp({
        name,
        logger: testLogger(),
        // Readiness is not under test here: a connection never opened will do.
        connection: mongoose.createConnection(),
        internalSecret: TEST_INTERNAL_SECRET,
        publicRoutes: (app) => {
          if (name === 'auth') app.post(LOGIN_PATH, express.text({ type: () => true }), stubLogin);
        },
        routes: (app) => {
          app.use((req, res) => {
            res.json({
              service: name,
              accountId: accountIdOf(req),
              method: req.method,
              path: req.originalUrl,
            });
          });
        },
      }),
    );
  const NAMES: ServiceName[] = ['auth', 'projects', 'deployments', 'webhooks'];
  const services = useRunning(async () => {
    const apps = Object.fromEntries(
      await Promise.all(NAMES.map(async (name) => [name, await serviceApp(name)] as const)),
    ) as Record<ServiceName, TestServer>;
    return {
      apps,
      close: () => Promise.all(NAMES.map((name) => apps[name].close())).then(() => undefined),
    };
  });
  /** A gateway whose routes lead to the service apps (`wiring` names which app serves which). */
  const gatewayTo = async (wiring: Record<ServiceName, ServiceName>) => {
    const url = (name: ServiceName) => services().apps[wiring[name]].url;
    const gateway = await startGateway({
      AUTH_URL: url('auth'),
      PROJECTS_URL: url('projects'),
      DEPLOYMENTS_URL: url('deployments'),
      WEBHOOKS_URL: url('webhooks'),
    });
    return { gateway, session: await gateway.logIn() };
  };

  describe('routed to the right services', () => {
    const running = useRunning(async () => {
      const { gateway, session } = await gatewayTo({
        auth: 'auth',
        projects: 'projects',
        deployments: 'deployments',
        webhooks: 'webhooks',
      });
      return { gateway, session, close: () => gateway.close() };
    });

    it.each(ROUTES)(
      "%s %s is accepted by %s as the session's account",
      async (method, path, name) => {
        const { gateway, session } = running();

        const response = await gateway.request(path, {
          method,
          cookie: session.cookie,
          body: bodyFor(method),
        });

        expect(response.status).toBe(200);
        expect(response.body).toEqual({ service: name, accountId: STUB_ACCOUNT.id, method, path });
      },
    );

    it('signs the path as the service receives it when the proxy rewrites it', async () => {
      const { gateway, session } = running();

      const response = await gateway.request('/api/projects//p1?x=1', { cookie: session.cookie });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        accountId: STUB_ACCOUNT.id,
        path: '/api/projects/p1?x=1',
      });
    });
  });

  it('is refused by a service it was not made for (a route wired to another service)', async () => {
    // deployments' and webhooks' routes lead to projects and deployments: what they receive
    // was signed for deployments and webhooks.
    const { gateway, session } = await gatewayTo({
      auth: 'auth',
      projects: 'projects',
      deployments: 'projects',
      webhooks: 'deployments',
    });
    try {
      const toDeployments = await gateway.request('/api/projects/p1/services/s1/deployments', {
        cookie: session.cookie,
      });
      const toWebhooks = await gateway.request('/api/projects/p1/webhooks', {
        cookie: session.cookie,
      });
      const toProjects = await gateway.request('/api/projects/p1', { cookie: session.cookie });

      expect(toDeployments.status).toBe(401);
      expect(toDeployments.body).toEqual(errorBody('UNAUTHORIZED'));
      expect(toWebhooks.status).toBe(401);
      expect(toProjects.status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
