import express, { Router } from 'express';
import mongoose from 'mongoose';
import {
  requestJson,
  startTestServer,
  testLogger,
  TEST_INTERNAL_SECRET,
  type TestServer,
} from '../testing';
import { accountIdOf, identityOfRequest } from './identity';
import { ownedOf, requireOwnership } from './ownership';
import { createServiceApp } from './service-app';

const INTERNAL_SECRET = 'x'.repeat(32);

/**
 * The projects service's internal endpoints as far as ownership goes: one project, one service,
 * for a caller whose identity projects would accept (made for it and this request).
 */
function projectsStub() {
  const app = express();
  const seen: string[] = [];
  app.get('/internal/projects/:projectId{/services/:serviceId}', (req, res) => {
    seen.push(req.path);
    if (identityOfRequest(req, INTERNAL_SECRET, 'projects') !== 'acct-1') {
      res.status(401).json({ error: 'UNAUTHORIZED', message: 'Login is required.' });
      return;
    }
    const { projectId, serviceId } = req.params as { projectId: string; serviceId?: string };
    if (projectId !== 'p1' || (serviceId !== undefined && serviceId !== 's1')) {
      res.status(404).json({ error: 'NOT_FOUND', message: 'Project not found.' });
      return;
    }
    res.json({ accountId: 'acct-1', projectId, ...(serviceId && { serviceId }) });
  });
  return { app, seen };
}

describe('requireOwnership', () => {
  let projects: TestServer;
  let service: TestServer;
  let stub: ReturnType<typeof projectsStub>;
  /** When set, projects answers every call with this instead. */
  let answer: { status: number; body: unknown } | null = null;

  beforeAll(async () => {
    stub = projectsStub();
    const switchable = express();
    switchable.use((req, res, next) => {
      if (!answer) return stub.app(req, res, next);
      res.status(answer.status).json(answer.body);
    });
    projects = await startTestServer(switchable);
    const config = { PROJECTS_URL: projects.url, INTERNAL_SECRET };
    service = await startTestServer(
      createServiceApp({
        name: 'deployments',
        logger: testLogger(),
        // Readiness is not under test here: a connection never opened will do.
        connection: mongoose.createConnection(),
        internalSecret: TEST_INTERNAL_SECRET,
        routes: (app) => {
          const router = Router({ mergeParams: true });
          router.get('/', (req, res) => {
            res.json({ owned: ownedOf(req), caller: accountIdOf(req) });
          });
          app.use('/api/projects/:projectId/things', requireOwnership(config, 'project'), router);
          app.use(
            '/api/projects/:projectId/services/:serviceId/things',
            requireOwnership(config, 'service'),
            router,
          );
        },
      }),
    );
  });
  afterAll(async () => {
    await service?.close();
    await projects?.close();
  });
  afterEach(() => {
    answer = null;
  });

  const get = (path: string) =>
    requestJson(`${service.url}${path}`, {
      identity: { accountId: 'acct-1', audience: 'deployments' },
    });

  it('puts the owned project on the request', async () => {
    const response = await get('/api/projects/p1/things');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      owned: { accountId: 'acct-1', projectId: 'p1' },
      caller: 'acct-1',
    });
  });

  it('puts the owned service of the project on the request', async () => {
    const response = await get('/api/projects/p1/services/s1/things');
    expect(response.status).toBe(200);
    expect(response.body.owned).toEqual({ accountId: 'acct-1', projectId: 'p1', serviceId: 's1' });
  });

  it.each([
    ['an unknown project', '/api/projects/p2/things', 'Project'],
    ['an unknown service', '/api/projects/p1/services/s2/things', 'Service'],
  ])('answers 404 NOT_FOUND for %s', async (_what, path, name) => {
    const response = await get(path);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: `${name} not found.` });
  });

  it('answers 404 for an id that is not a plain path segment, without asking projects', async () => {
    const before = stub.seen.length;
    const response = await get(`/api/projects/${encodeURIComponent('p1/../p2')}/things`);
    expect(response.status).toBe(404);
    expect(stub.seen.length).toBe(before);
  });

  it('passes 503 on when projects is unavailable', async () => {
    answer = { status: 503, body: { error: 'SERVICE_UNAVAILABLE', message: 'down' } };
    const response = await get('/api/projects/p1/things');
    expect(response.status).toBe(503);
    expect(response.body.error).toBe('SERVICE_UNAVAILABLE');
  });

  it("answers 500 INTERNAL when projects refuses the service's own call", async () => {
    answer = { status: 401, body: { error: 'UNAUTHORIZED', message: 'bad identity' } };
    const response = await get('/api/projects/p1/things');
    expect(response.status).toBe(500);
    expect(response.body.error).toBe('INTERNAL');
  });
});
