import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { errorBody, startTestServer, waitFor, type TestServer } from '@platform/shared/testing';
import { startGateway, type TestGateway } from '../test/start-gateway';

/**
 * The projects service, slow on demand: it holds every request until `release()`, then answers
 * the held ones and every later one at once. `paths` is what reached it, in order.
 */
async function startHoldingService() {
  const held: (() => void)[] = [];
  const paths: string[] = [];
  let holding = true;
  const server: TestServer = await startTestServer((req, res) => {
    paths.push(req.url!);
    const answer = () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url }));
    };
    if (holding) held.push(answer);
    else answer();
  });
  return {
    server,
    paths,
    held: () => held.length,
    release() {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

/** A request through the gateway whose client can leave before the answer (`leave()`). */
function openRequest(gateway: TestGateway, path: string, cookie: string) {
  let client!: ClientRequest;
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    client = httpRequest(`${gateway.url}${path}`, { headers: { cookie } }, resolve);
    client.on('error', reject);
    client.end();
  });
  return {
    answered,
    leave() {
      answered.catch(() => {});
      client.destroy();
    },
  };
}

/** The gateway's gauge of the requests waiting for a turn at the projects service. */
async function waitingForProjects(gateway: TestGateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = /^gateway_upstream_waiting_requests\{[^}]*upstream="projects"[^}]*\} (\d+)$/m.exec(
    text,
  );
  return line ? Number(line[1]) : 0;
}

describe('requests waiting for a turn at a service', () => {
  let service: Awaited<ReturnType<typeof startHoldingService>>;
  let gateway: TestGateway;
  let cookie: string;
  beforeEach(async () => {
    service = await startHoldingService();
    gateway = await startGateway({
      PROJECTS_URL: service.server.url,
      UPSTREAM_CONCURRENCY: '1',
      UPSTREAM_QUEUE_LIMIT: '2',
    });
    cookie = (await gateway.logIn()).cookie;
  });
  afterEach(async () => {
    await gateway.close();
    await service.server.close();
  });

  /** One request in the only turn (held by the service) and `count` queued behind it. */
  async function fillQueue(count: number) {
    const inTurn = gateway.request('/api/projects?n=turn', { cookie });
    await waitFor(() => service.held() === 1, { what: 'the service to hold the first request' });
    const queued = Array.from({ length: count }, (_, i) =>
      openRequest(gateway, `/api/projects?n=queued-${i}`, cookie),
    );
    await waitFor(async () => (await waitingForProjects(gateway)) === count, {
      what: `${count} requests waiting`,
    });
    return { inTurn, queued };
  }

  it('are at most UPSTREAM_QUEUE_LIMIT; one more is 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const { inTurn, queued } = await fillQueue(2);

    const refused = await gateway.request('/api/projects?n=refused', { cookie });

    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual(errorBody('SERVICE_UNAVAILABLE', /projects/));
    service.release();
    expect((await inTurn).status).toBe(200);
    for (const { answered } of queued) expect((await answered).statusCode).toBe(200);
    expect(service.paths[0]).toBe('/api/projects?n=turn');
    expect(service.paths.slice(1).sort()).toEqual([
      '/api/projects?n=queued-0',
      '/api/projects?n=queued-1',
    ]);
  });

  it('leave the queue the moment their client goes: they take no place and never reach the service', async () => {
    const { inTurn, queued } = await fillQueue(2);

    for (const request of queued) request.leave();
    await waitFor(async () => (await waitingForProjects(gateway)) === 0, {
      what: 'the queue to be empty',
    });
    // Their places are free for two more.
    const next = [0, 1].map((i) => gateway.request(`/api/projects?n=next-${i}`, { cookie }));
    await waitFor(async () => (await waitingForProjects(gateway)) === 2, {
      what: 'the next two requests waiting',
    });
    service.release();

    expect((await inTurn).status).toBe(200);
    expect((await Promise.all(next)).map((r) => r.status)).toEqual([200, 200]);
    expect(service.paths[0]).toBe('/api/projects?n=turn');
    expect(service.paths.slice(1).sort()).toEqual([
      '/api/projects?n=next-0',
      '/api/projects?n=next-1',
    ]);
  });
});
