import { Types } from 'mongoose';
import { serviceDeletedEvent } from '@platform/shared';
import { uniqueName } from '@platform/shared/testing';
import {
  apiClient,
  buildProject,
  buildService,
  type ApiClient,
  type ProjectBody,
} from '../test/api-client';
import { startTestApp, type TestApp } from '../test/test-app';
import { SERVICES_PER_PROJECT } from './services.service';

const SERVICE_FIELDS = ['createdAt', 'id', 'name', 'projectId'];

let app: TestApp;
let client: ApiClient;
let project: ProjectBody;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

beforeEach(async () => {
  client = apiClient(app.url);
  project = await buildProject(client);
});

const servicesPath = (projectId = project.id) => `/api/projects/${projectId}/services`;
const storedService = (id: string) => app.models.services.findById(id).lean();

describe('POST /api/projects/:projectId/services', () => {
  it('returns 201 with exactly id, projectId, name and createdAt, and stores the service', async () => {
    const response = await client.post(servicesPath(), { name: ' api ' });

    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(SERVICE_FIELDS);
    expect(response.body).toMatchObject({ projectId: project.id, name: 'api' });
    expect(response.body.id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Date(response.body.createdAt).toISOString()).toBe(response.body.createdAt);
    const stored = await storedService(response.body.id);
    expect(stored).toMatchObject({
      accountId: client.accountId,
      name: 'api',
      nameKey: 'api',
      deletedAt: null,
    });
    expect(stored?.projectId.toHexString()).toBe(project.id);
  });

  it('returns 409 CONFLICT when the project has a service of that name in another letter case', async () => {
    await buildService(client, project.id, { name: 'Worker' });

    const response = await client.post(servicesPath(), { name: 'WORKER' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'A service named "WORKER" already exists in this project.',
    });
    expect(await app.models.services.countDocuments({ projectId: project.id })).toBe(1);
  });

  it('allows the same name in another project', async () => {
    const other = await buildProject(client);
    await buildService(client, project.id, { name: 'web' });

    const response = await client.post(servicesPath(other.id), { name: 'web' });

    expect(response.status).toBe(201);
    expect(response.body.projectId).toBe(other.id);
  });

  it.each([
    ['the name is missing', {}, 'name'],
    ['the name is blank', { name: ' ' }, 'name'],
    ['the name is longer than 100 characters', { name: 's'.repeat(101) }, 'name'],
    ['the name is an operator object', { name: { $gt: '' } }, 'name'],
    [
      'a field is unknown',
      { name: 'ok', projectId: new Types.ObjectId().toHexString() },
      'projectId',
    ],
  ])('returns 400 VALIDATION_ERROR when %s', async (_case, body, path) => {
    const response = await client.post(servicesPath(), body);

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path, message: expect.any(String) }],
    });
    expect(await app.models.services.countDocuments({ accountId: client.accountId })).toBe(0);
  });

  it('returns 404 NOT_FOUND for an unknown, malformed or deleted project', async () => {
    const deleted = await buildProject(client);
    expect((await client.delete(`/api/projects/${deleted.id}`)).status).toBe(204);

    for (const projectId of [new Types.ObjectId().toHexString(), 'nope', deleted.id]) {
      const response = await client.post(servicesPath(projectId), { name: 'orphan' });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
    expect(await app.models.services.countDocuments({ accountId: client.accountId })).toBe(0);
  });
});

describe('GET /api/projects/:projectId/services', () => {
  it("lists the project's services newest first with exactly the Service fields", async () => {
    const first = await buildService(client, project.id);
    const second = await buildService(client, project.id);
    await buildService(client, (await buildProject(client)).id);

    const response = await client.get(servicesPath());

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ services: [second, first] });
    for (const item of response.body.services)
      expect(Object.keys(item).sort()).toEqual(SERVICE_FIELDS);
  });

  it('pages with limit and cursor, and leaves nextCursor out on the last page', async () => {
    const built = [];
    for (let i = 0; i < 5; i++) built.push(await buildService(client, project.id));
    const newestFirst = built.reverse().map((s) => s.id);

    const seen: string[] = [];
    let cursor: string | undefined;
    const pages: number[] = [];
    do {
      const query = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const response = await client.get(`${servicesPath()}${query}`);
      expect(response.status).toBe(200);
      seen.push(...response.body.services.map((s: { id: string }) => s.id));
      pages.push(response.body.services.length);
      cursor = response.body.nextCursor;
    } while (cursor);

    expect(seen).toEqual(newestFirst);
    expect(pages).toEqual([2, 2, 1]);
  });

  it('returns 400 VALIDATION_ERROR for a limit out of range or a forged cursor', async () => {
    for (const query of ['?limit=0', '?limit=101', '?cursor=forged', '?sort=name']) {
      const response = await client.get(`${servicesPath()}${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('VALIDATION_ERROR');
    }
  });
});

describe('GET /api/projects/:projectId/services/:serviceId', () => {
  it('returns 200 with exactly the Service fields', async () => {
    const service = await buildService(client, project.id);

    const response = await client.get(`${servicesPath()}/${service.id}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(service);
  });

  it('returns 404 NOT_FOUND for an unknown or malformed id, or a service of another project', async () => {
    const elsewhere = await buildService(client, (await buildProject(client)).id);

    for (const serviceId of [new Types.ObjectId().toHexString(), 'bad-id', elsewhere.id]) {
      const response = await client.get(`${servicesPath()}/${serviceId}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
  });
});

describe('PATCH /api/projects/:projectId/services/:serviceId', () => {
  it('renames the service and returns the whole service', async () => {
    const service = await buildService(client, project.id, { name: 'old' });

    const response = await client.patch(`${servicesPath()}/${service.id}`, { name: 'New' });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...service, name: 'New' });
    expect(await storedService(service.id)).toMatchObject({ name: 'New', nameKey: 'new' });
  });

  it('allows a change of letter case of its own name', async () => {
    const service = await buildService(client, project.id, { name: 'case' });

    const response = await client.patch(`${servicesPath()}/${service.id}`, { name: 'CASE' });

    expect(response.status).toBe(200);
    expect(response.body.name).toBe('CASE');
  });

  it('returns 409 CONFLICT when another service of the project has the name', async () => {
    await buildService(client, project.id, { name: 'taken' });
    const service = await buildService(client, project.id, { name: 'mine' });

    const response = await client.patch(`${servicesPath()}/${service.id}`, { name: 'Taken' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'A service named "Taken" already exists in this project.',
    });
    expect(await storedService(service.id)).toMatchObject({ name: 'mine' });
  });

  it.each([
    ['the body is empty', {}, 'name'],
    ['a field is unknown', { name: 'x', createdAt: 'now' }, 'createdAt'],
    ['the name is an operator object', { name: { $regex: '.*' } }, 'name'],
  ])('returns 400 VALIDATION_ERROR when %s and changes nothing', async (_case, body, path) => {
    const service = await buildService(client, project.id, { name: 'steady' });

    const response = await client.patch(`${servicesPath()}/${service.id}`, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path }] });
    expect(await storedService(service.id)).toMatchObject({ name: 'steady' });
  });

  it('returns 404 NOT_FOUND for an unknown service, even when the name is taken', async () => {
    await buildService(client, project.id, { name: 'existing' });

    for (const body of [{ name: 'free' }, { name: 'existing' }]) {
      const response = await client.patch(
        `${servicesPath()}/${new Types.ObjectId().toHexString()}`,
        body,
      );
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
  });
});

describe('DELETE /api/projects/:projectId/services/:serviceId', () => {
  it('returns 204 with no body, reads 404 at once and queues service.deleted with the deletion', async () => {
    const service = await buildService(client, project.id, { name: 'doomed' });

    const response = await client.delete(`${servicesPath()}/${service.id}`);

    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect((await client.get(`${servicesPath()}/${service.id}`)).status).toBe(404);
    expect((await client.get(servicesPath())).body).toEqual({ services: [] });
    const stored = await storedService(service.id);
    if (stored) {
      // The relay may already have published and emptied the outbox; the mark stays either way.
      expect(stored.deletedAt).toBeInstanceOf(Date);
      expect(stored.nameKey).not.toBe('doomed');
    }
  });

  it('frees the name for a new service at once', async () => {
    const service = await buildService(client, project.id, { name: 'reused' });
    await client.delete(`${servicesPath()}/${service.id}`);

    const response = await client.post(servicesPath(), { name: 'Reused' });

    expect(response.status).toBe(201);
  });

  it('writes a service.deleted event that matches the shared schema into the outbox', async () => {
    const service = await buildService(client, project.id);
    // Stop the relay so the queued event can be read before it goes out.
    await app.relay.stop();
    try {
      await client.delete(`${servicesPath()}/${service.id}`);

      const stored = await storedService(service.id);
      expect(stored?.outboxPending).toBe(true);
      expect(stored?.outbox).toHaveLength(1);
      const [entry] = stored!.outbox;
      expect(entry).toMatchObject({ topic: 'service.deleted', key: service.id });
      expect(serviceDeletedEvent.parse(entry!.payload)).toEqual({
        eventId: entry!.eventId,
        type: 'service.deleted',
        occurredAt: expect.any(String),
        accountId: client.accountId,
        projectId: project.id,
        serviceId: service.id,
      });
    } finally {
      app.relay.start();
    }
  });

  it('returns 404 NOT_FOUND for a service deleted before, and queues nothing more', async () => {
    const service = await buildService(client, project.id);
    await app.relay.stop();
    try {
      expect((await client.delete(`${servicesPath()}/${service.id}`)).status).toBe(204);

      const again = await client.delete(`${servicesPath()}/${service.id}`);

      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
      expect((await storedService(service.id))?.outbox).toHaveLength(1);
    } finally {
      app.relay.start();
    }
  });
});

describe("another account's services", () => {
  it('are 404 NOT_FOUND on every services route and are left unchanged', async () => {
    const owner = apiClient(app.url, uniqueName('owner'));
    const theirs = await buildProject(owner);
    const service = await buildService(owner, theirs.id, { name: 'private' });
    const one = `${servicesPath(theirs.id)}/${service.id}`;

    const responses = [
      await client.get(servicesPath(theirs.id)),
      await client.post(servicesPath(theirs.id), { name: 'intruder' }),
      await client.get(one),
      await client.patch(one, { name: 'hijacked' }),
      await client.delete(one),
    ];

    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
    expect(await storedService(service.id)).toMatchObject({
      name: 'private',
      deletedAt: null,
      outbox: [],
    });
    expect(await app.models.services.countDocuments({ projectId: theirs.id })).toBe(1);
  });

  it('stay 404 when the caller names its own project with their service id', async () => {
    const owner = apiClient(app.url, uniqueName('owner'));
    const service = await buildService(owner, (await buildProject(owner)).id);
    const mixed = `${servicesPath()}/${service.id}`;

    for (const response of [
      await client.get(mixed),
      await client.patch(mixed, { name: 'hijacked' }),
      await client.delete(mixed),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
    expect(await storedService(service.id)).toMatchObject({ deletedAt: null, outbox: [] });
  });
});

describe('the services of a deleted project', () => {
  it('are 404 NOT_FOUND on every route from the moment the project is deleted', async () => {
    const service = await buildService(client, project.id);
    const one = `${servicesPath()}/${service.id}`;
    expect((await client.delete(`/api/projects/${project.id}`)).status).toBe(204);

    for (const response of [
      await client.get(servicesPath()),
      await client.get(one),
      await client.patch(one, { name: 'late' }),
      await client.delete(one),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
  });
});

// Last in the file: the seeded documents would slow every later query down on FerretDB.
describe('the service quota', () => {
  it('returns 409 CONFLICT once the project has 1,000 services', async () => {
    const createdAt = new Date();
    await app.models.services.insertMany(
      Array.from({ length: SERVICES_PER_PROJECT - 1 }, (_, i) => ({
        accountId: client.accountId,
        projectId: new Types.ObjectId(project.id),
        name: `seeded ${i}`,
        nameKey: `seeded ${i}`,
        createdAt,
      })),
    );
    expect((await client.post(servicesPath(), { name: 'the thousandth' })).status).toBe(201);

    const response = await client.post(servicesPath(), { name: 'one too many' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'A project can have at most 1000 services: delete one to create another.',
    });
    expect(await app.models.services.countDocuments({ projectId: project.id })).toBe(1000);
  });
});
