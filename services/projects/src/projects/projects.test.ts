import { Types } from 'mongoose';
import { requestJson, uniqueName } from '@platform/shared/testing';
import { apiClient, buildProject, type ApiClient } from '../test/api-client';
import { startTestApp, type TestApp } from '../test/test-app';
import { PROJECTS_PER_ACCOUNT } from './projects.service';

const PROJECT_FIELDS = ['createdAt', 'description', 'id', 'name'];
const LIST_ITEM_FIELDS = ['createdAt', 'id', 'name'];

let app: TestApp;
let client: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

beforeEach(() => {
  client = apiClient(app.url);
});

const storedProject = (id: string) => app.models.projects.findById(id).lean();

describe('POST /api/projects', () => {
  it('returns 201 with exactly id, name, description and createdAt, and stores the project', async () => {
    const before = Date.now();
    const response = await client.post('/api/projects', {
      name: '  Web shop  ',
      description: 'Storefront',
    });

    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(PROJECT_FIELDS);
    expect(response.body).toMatchObject({ name: 'Web shop', description: 'Storefront' });
    expect(response.body.id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Date(response.body.createdAt).toISOString()).toBe(response.body.createdAt);
    expect(Date.parse(response.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    const stored = await storedProject(response.body.id);
    expect(stored).toMatchObject({
      accountId: client.accountId,
      name: 'Web shop',
      nameKey: 'web shop',
      description: 'Storefront',
      deletedAt: null,
      outbox: [],
    });
  });

  it('defaults the description to an empty string', async () => {
    const response = await client.post('/api/projects', { name: 'No description' });

    expect(response.status).toBe(201);
    expect(response.body.description).toBe('');
    expect((await storedProject(response.body.id))?.description).toBe('');
  });

  it('accepts a name of exactly 100 characters and a description of exactly 2,000', async () => {
    const name = 'n'.repeat(100);
    const response = await client.post('/api/projects', { name, description: 'd'.repeat(2000) });

    expect(response.status).toBe(201);
    expect(response.body.name).toBe(name);
    expect(response.body.description).toHaveLength(2000);
  });

  it('returns 409 CONFLICT when the account has a project of that name in another letter case', async () => {
    await buildProject(client, { name: 'Billing API' });

    const response = await client.post('/api/projects', { name: 'billing api' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'A project named "billing api" already exists.',
    });
    expect(await app.models.projects.countDocuments({ accountId: client.accountId })).toBe(1);
  });

  it('lets two accounts use the same name', async () => {
    const other = apiClient(app.url);
    await buildProject(client, { name: 'Shared name' });

    const response = await other.post('/api/projects', { name: 'Shared name' });

    expect(response.status).toBe(201);
    expect(await app.models.projects.countDocuments({ nameKey: 'shared name' })).toBe(2);
  });

  it.each([
    ['the name is missing', { description: 'x' }, 'name'],
    ['the name is blank', { name: '   ' }, 'name'],
    ['the name is longer than 100 characters', { name: 'n'.repeat(101) }, 'name'],
    ['the name holds a control character', { name: 'tab\there' }, 'name'],
    ['the name is not a string', { name: 42 }, 'name'],
    [
      'the description is longer than 2,000 characters',
      { name: 'ok', description: 'd'.repeat(2001) },
      'description',
    ],
    ['the description is not a string', { name: 'ok', description: null }, 'description'],
  ])('returns 400 VALIDATION_ERROR when %s', async (_case, body, path) => {
    const response = await client.post('/api/projects', body);

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path, message: expect.any(String) }],
    });
    expect(await app.models.projects.countDocuments({ accountId: client.accountId })).toBe(0);
  });

  it('returns 400 VALIDATION_ERROR naming each unknown field, so no field can be smuggled in', async () => {
    const response = await client.post('/api/projects', {
      name: 'ok',
      accountId: 'someone-else',
      owner: 'x',
    });

    expect(response.status).toBe(400);
    expect(response.body.error).toBe('VALIDATION_ERROR');
    expect(response.body.details).toEqual(
      expect.arrayContaining([
        { path: 'accountId', message: 'unknown field' },
        { path: 'owner', message: 'unknown field' },
      ]),
    );
    expect(response.body.details).toHaveLength(2);
    expect(await app.models.projects.countDocuments({ accountId: 'someone-else' })).toBe(0);
  });

  it('refuses an operator object in place of the name, so it never reaches a query', async () => {
    await buildProject(client, { name: 'existing' });

    const response = await client.post('/api/projects', { name: { $gt: '' } });

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path: 'name' }] });
    expect(await app.models.projects.countDocuments({ accountId: client.accountId })).toBe(1);
  });

  it('returns 400 INVALID_REQUEST for malformed JSON', async () => {
    const response = await client.post('/api/projects', '{"name": ');

    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'INVALID_REQUEST', message: expect.any(String) });
  });

  it('returns 400 VALIDATION_ERROR when the body is a JSON array', async () => {
    const response = await client.post('/api/projects', [{ name: 'x' }]);

    expect(response.status).toBe(400);
    expect(response.body.error).toBe('VALIDATION_ERROR');
    expect(await app.models.projects.countDocuments({ accountId: client.accountId })).toBe(0);
  });

  it('returns 401 UNAUTHORIZED without the identity header', async () => {
    const response = await requestJson(`${app.url}/api/projects`, {
      method: 'POST',
      body: { name: 'x' },
    });

    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: 'UNAUTHORIZED',
      message: expect.stringMatching(/login/i),
    });
  });
});

describe('GET /api/projects/:projectId', () => {
  it('returns 200 with exactly id, name, description and createdAt', async () => {
    const project = await buildProject(client, { name: 'Docs', description: 'The docs site' });

    const response = await client.get(`/api/projects/${project.id}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(project);
    expect(Object.keys(response.body).sort()).toEqual(PROJECT_FIELDS);
  });

  it.each([
    ['an unknown id', () => new Types.ObjectId().toHexString()],
    ['a malformed id', () => 'not-an-id'],
    ['an id with an operator in it', () => encodeURIComponent('{"$ne":null}')],
  ])('returns 404 NOT_FOUND for %s', async (_case, id) => {
    const response = await client.get(`/api/projects/${id()}`);

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
  });
});

describe('GET /api/projects', () => {
  it("lists only the caller's projects, newest first, with exactly id, name and createdAt", async () => {
    const first = await buildProject(client, { name: 'first' });
    const second = await buildProject(client, { name: 'second' });
    const third = await buildProject(client, { name: 'third' });
    await buildProject(apiClient(app.url), { name: 'not mine' });

    const response = await client.get('/api/projects');

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['projects']);
    expect(response.body.projects).toEqual(
      [third, second, first].map(({ id, name, createdAt }) => ({ id, name, createdAt })),
    );
    for (const item of response.body.projects)
      expect(Object.keys(item).sort()).toEqual(LIST_ITEM_FIELDS);
  });

  it('returns an empty list for an account without projects', async () => {
    const response = await client.get('/api/projects');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ projects: [] });
  });
});

describe('PATCH /api/projects/:projectId', () => {
  it('renames the project and returns the whole project', async () => {
    const project = await buildProject(client, { name: 'Old name', description: 'kept' });

    const response = await client.patch(`/api/projects/${project.id}`, { name: ' New name ' });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...project, name: 'New name' });
    expect(await storedProject(project.id)).toMatchObject({
      name: 'New name',
      nameKey: 'new name',
      description: 'kept',
    });
  });

  it('changes the description alone', async () => {
    const project = await buildProject(client, { name: 'Same', description: 'before' });

    const response = await client.patch(`/api/projects/${project.id}`, { description: 'after' });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...project, description: 'after' });
    expect(await storedProject(project.id)).toMatchObject({ name: 'Same', description: 'after' });
  });

  it('changes name and description together', async () => {
    const project = await buildProject(client);

    const response = await client.patch(`/api/projects/${project.id}`, {
      name: 'Both',
      description: '',
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...project, name: 'Both', description: '' });
  });

  it('returns 409 CONFLICT when another project of the account has the new name in any letter case', async () => {
    await buildProject(client, { name: 'Taken' });
    const project = await buildProject(client, { name: 'Mine' });

    const response = await client.patch(`/api/projects/${project.id}`, { name: 'TAKEN' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'A project named "TAKEN" already exists.',
    });
    expect(await storedProject(project.id)).toMatchObject({ name: 'Mine', nameKey: 'mine' });
  });

  it('allows a project to change the letter case of its own name', async () => {
    const project = await buildProject(client, { name: 'lower' });

    const response = await client.patch(`/api/projects/${project.id}`, { name: 'LOWER' });

    expect(response.status).toBe(200);
    expect(response.body.name).toBe('LOWER');
  });

  it('frees the old name for a new project', async () => {
    const project = await buildProject(client, { name: 'Before rename' });
    await client.patch(`/api/projects/${project.id}`, { name: 'After rename' });

    const response = await client.post('/api/projects', { name: 'Before rename' });

    expect(response.status).toBe(201);
  });

  it.each([
    ['the body is empty', {}, '(body)'],
    ['the name is blank', { name: '' }, 'name'],
    ['the name is an operator object', { name: { $ne: null } }, 'name'],
    ['a field is unknown', { name: 'ok', createdAt: '2020-01-01T00:00:00.000Z' }, 'createdAt'],
  ])('returns 400 VALIDATION_ERROR when %s and changes nothing', async (_case, body, path) => {
    const project = await buildProject(client, { name: 'Untouched' });

    const response = await client.patch(`/api/projects/${project.id}`, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path }] });
    expect(await storedProject(project.id)).toMatchObject({
      name: 'Untouched',
      createdAt: new Date(project.createdAt),
    });
  });

  it('returns 404 NOT_FOUND for an unknown or malformed id', async () => {
    for (const id of [new Types.ObjectId().toHexString(), 'zzz']) {
      const response = await client.patch(`/api/projects/${id}`, { name: 'x' });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
  });
});

describe("another account's project", () => {
  it('is 404 NOT_FOUND on GET, PATCH and DELETE and is left unchanged', async () => {
    const owner = apiClient(app.url, uniqueName('owner'));
    const project = await buildProject(owner, { name: 'Private', description: 'secret' });
    // The intruder even holds a project of the name it tries, so a 409 would leak nothing new.
    await buildProject(client, { name: 'Renamed' });

    const responses = [
      await client.get(`/api/projects/${project.id}`),
      await client.patch(`/api/projects/${project.id}`, { name: 'Renamed' }),
      await client.patch(`/api/projects/${project.id}`, { description: 'mine now' }),
      await client.delete(`/api/projects/${project.id}`),
    ];

    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
    expect(await storedProject(project.id)).toMatchObject({
      name: 'Private',
      description: 'secret',
      deletedAt: null,
      outbox: [],
    });
    expect(
      (await client.get('/api/projects')).body.projects.map((p: { id: string }) => p.id),
    ).not.toContain(project.id);
  });
});

describe('health', () => {
  it('reports ready on /readyz when MongoDB answers, without an identity', async () => {
    const response = await requestJson(`${app.url}/readyz`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: { mongo: 'ok' } });
  });

  it('answers an unknown route with a JSON 404', async () => {
    const response = await client.get('/api/nothing-here');

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Route not found.' });
  });
});

// Last in the file: the seeded documents would slow every later query down on FerretDB.
describe('the project quota', () => {
  it('returns 409 CONFLICT with a clear message once the account has 1,000 projects', async () => {
    const createdAt = new Date();
    await app.models.projects.insertMany(
      Array.from({ length: PROJECTS_PER_ACCOUNT - 1 }, (_, i) => ({
        accountId: client.accountId,
        name: `seeded ${i}`,
        nameKey: `seeded ${i}`,
        createdAt,
      })),
    );
    const last = await client.post('/api/projects', { name: 'the thousandth' });
    expect(last.status).toBe(201);

    const response = await client.post('/api/projects', { name: 'one too many' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'CONFLICT',
      message: 'An account can have at most 1000 projects: delete one to create another.',
    });
    expect(await app.models.projects.countDocuments({ accountId: client.accountId })).toBe(1000);
    // A deleted project no longer counts.
    expect((await client.delete(`/api/projects/${last.body.id}`)).status).toBe(204);
    expect((await client.post('/api/projects', { name: 'one too many' })).status).toBe(201);
  });
});
