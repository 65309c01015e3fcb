import { Router } from 'express';
import { z } from 'zod';
import mongoose, { type Connection } from 'mongoose';
import { conflict, notFound } from '../errors';
import { connectMongo } from '../mongo';
import { createServiceApp } from './service-app';
import { validate } from './validation';
import { accountIdOf } from './identity';
import {
  errorBody,
  identityHeaders,
  requestJson,
  startTestServer,
  testInfraUrls,
  testLogger,
  uniqueName,
  TEST_INTERNAL_SECRET,
  type TestServer,
} from '../testing';

const itemSchema = z.object({ name: z.string().min(1).max(5) }).strict();

/** The shared app with a few routes of its own, ready while `connection` answers a ping. */
function buildApp(connection: Connection) {
  return createServiceApp({
    name: 'projects',
    logger: testLogger(),
    connection,
    internalSecret: TEST_INTERNAL_SECRET,
    routes: (app) => {
      const router = Router();
      router.get('/whoami', (req, res) => {
        res.json({ accountId: accountIdOf(req) });
      });
      router.post('/items', (req, res) => {
        res.status(201).json(validate(itemSchema, req.body));
      });
      router.get('/missing', () => {
        throw notFound('Project');
      });
      router.get('/taken', async () => {
        throw conflict('The name is taken.');
      });
      router.get('/bug', async () => {
        throw new Error('secret internals at /srv/app.ts:12');
      });
      router.get('/mongo-down', async () => {
        // A real driver error: nothing listens on port 1.
        const connection = mongoose.createConnection('mongodb://127.0.0.1:1', {
          serverSelectionTimeoutMS: 200,
        });
        try {
          await connection.asPromise();
        } finally {
          await connection.close().catch(() => undefined);
        }
      });
      app.use(router);
    },
  });
}

describe('the shared service app and error middleware', () => {
  let server: TestServer;
  let connection: Connection;
  const as = { accountId: 'acct-1', audience: 'projects' } as const;

  beforeAll(async () => {
    connection = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: uniqueName('shared_service_app'),
      logger: testLogger(),
    });
    server = await startTestServer(buildApp(connection));
  });
  afterAll(async () => {
    await server.close();
    await connection.close();
  });

  it('answers 401 UNAUTHORIZED without the identity header', async () => {
    const res = await requestJson(`${server.url}/whoami`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'UNAUTHORIZED',
      message: expect.stringMatching(/login is required/i),
    });
  });

  it('answers 401 for a tampered identity header', async () => {
    const url = `${server.url}/whoami`;
    const header = identityHeaders(as, 'GET', url)['x-platform-identity']!;
    const res = await requestJson(url, {
      headers: { 'x-platform-identity': `${header.slice(0, -2)}xx` },
    });
    expect(res.status).toBe(401);
  });

  it.each([
    ['made for another service', { ...as, audience: 'deployments' as const }, 'GET', '/whoami'],
    ['made for GET, sent with DELETE', as, 'DELETE', '/whoami'],
    ['made for another path', as, 'GET', '/taken'],
    ['made for the path without its query', as, 'GET', '/whoami?as=other'],
  ])('answers 401 for an identity %s', async (_case, identity, method, path) => {
    // Each is made for GET /whoami (as `identity` says) and sent as `method path`.
    const made = identityHeaders(identity, 'GET', `${server.url}/whoami`);

    const res = await requestJson(`${server.url}${path}`, { method, headers: made });

    expect(res.status).toBe(401);
    expect(res.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it('accepts an identity made for the path with its query', async () => {
    const res = await requestJson(`${server.url}/whoami?as=other`, { identity: as });
    expect(res).toMatchObject({ status: 200, body: { accountId: 'acct-1' } });
  });

  it('passes the verified account id to the route', async () => {
    const res = await requestJson(`${server.url}/whoami`, { identity: as });
    expect(res).toMatchObject({ status: 200, body: { accountId: 'acct-1' } });
  });

  it('answers health, readiness and metrics without identity', async () => {
    expect((await requestJson(`${server.url}/healthz`)).body).toEqual({ status: 'ok' });
    expect((await requestJson(`${server.url}/readyz`)).status).toBe(200);
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('http_request_duration_seconds_bucket');
  });

  it('answers 400 INVALID_REQUEST for malformed JSON', async () => {
    const res = await requestJson(`${server.url}/items`, {
      method: 'POST',
      identity: as,
      body: '{"name":',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'INVALID_REQUEST', message: expect.any(String) });
  });

  it('answers 400 INVALID_REQUEST for a body that is not JSON', async () => {
    const res = await requestJson(`${server.url}/items`, {
      method: 'POST',
      identity: as,
      headers: { 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('INVALID_REQUEST');
  });

  it('answers 400 VALIDATION_ERROR with details for an invalid body and an unknown field', async () => {
    const res = await requestJson(`${server.url}/items`, {
      method: 'POST',
      identity: as,
      body: { name: 'far too long', extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('VALIDATION_ERROR');
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { path: 'name', message: expect.any(String) },
        { path: 'extra', message: 'unknown field' },
      ]),
    );
  });

  it('never lets an operator object through a string field', async () => {
    const res = await requestJson(`${server.url}/items`, {
      method: 'POST',
      identity: as,
      body: { name: { $gt: '' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'name', message: expect.any(String) }]);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 100 KiB', async () => {
    const res = await requestJson(`${server.url}/items`, {
      method: 'POST',
      identity: as,
      body: { name: 'x'.repeat(101 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
  });

  it('answers a JSON 404 NOT_FOUND for an unknown route', async () => {
    const res = await requestJson(`${server.url}/nowhere`, { identity: as });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'NOT_FOUND', message: expect.any(String) });
  });

  it('turns thrown AppErrors into their status and code', async () => {
    expect(await requestJson(`${server.url}/missing`, { identity: as })).toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND', message: 'Project not found.' },
    });
    expect(await requestJson(`${server.url}/taken`, { identity: as })).toMatchObject({
      status: 409,
      body: { error: 'CONFLICT', message: 'The name is taken.' },
    });
  });

  it('answers 500 INTERNAL without leaking the error or a stack', async () => {
    const res = await requestJson(`${server.url}/bug`, { identity: as });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'INTERNAL', message: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/secret internals|app\.ts/);
  });

  it('answers 503 SERVICE_UNAVAILABLE when a database does not answer', async () => {
    const res = await requestJson(`${server.url}/mongo-down`, { identity: as });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
  });

  it('answers /readyz 503 naming the dependency that failed', async () => {
    // A connection never opened: its ping fails at once.
    const failing = await startTestServer(buildApp(mongoose.createConnection()));
    try {
      const res = await requestJson(`${failing.url}/readyz`);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        error: 'SERVICE_UNAVAILABLE',
        details: [{ path: 'mongo', message: 'mongo is not connected' }],
      });
    } finally {
      await failing.close();
    }
  });

  it('echoes a well-formed request id and makes one otherwise', async () => {
    const given = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'req-123' } });
    expect(given.headers.get('x-request-id')).toBe('req-123');
    const made = await fetch(`${server.url}/healthz`, {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
