// What only projects do: a description, the account as owner, the app around them. What they do
// as services do is tested over both in names/named-resources.test.ts.
import { errorBody, requestJson, uniqueName, useRunning } from '@platform/shared/testing';
import { apiClient, buildProject, type ApiClient } from '../test/api-client';
import { startTestApp } from '../test/test-app';

const app = useRunning(startTestApp);
let client: ApiClient;

beforeEach(() => {
  client = apiClient(app().url);
});

const storedProject = (id: string) => app().models.projects.findById(id).lean();
const countOfAccount = (accountId = client.accountId) =>
  app().models.projects.countDocuments({ accountId });

describe('POST /api/projects', () => {
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

  it('keeps newlines and tabs in a description and refuses any other control character', async () => {
    const kept = await client.post('/api/projects', {
      name: 'Multi-line',
      description: 'line one\n\tline two',
    });
    const refused = await Promise.all(
      ['nul\u0000', 'bell\u0007', 'escape\u001b[2J', 'return\r'].map((description) =>
        client.post('/api/projects', { name: `Refused ${description.length}`, description }),
      ),
    );

    expect(kept.status).toBe(201);
    expect(kept.body.description).toBe('line one\n\tline two');
    expect(refused.map((r) => [r.status, r.body.details])).toEqual(
      refused.map(() => [
        400,
        [{ path: 'description', message: expect.stringMatching(/control/) }],
      ]),
    );
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
    expect(await countOfAccount('someone-else')).toBe(0);
  });

  it('refuses an operator object in place of the name, so it never reaches a query', async () => {
    await buildProject(client, { name: 'existing' });

    const response = await client.post('/api/projects', { name: { $gt: '' } });

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path: 'name' }] });
    expect(await countOfAccount()).toBe(1);
  });

  it('returns 400 INVALID_REQUEST for malformed JSON', async () => {
    const response = await client.post('/api/projects', '{"name": ');

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody('INVALID_REQUEST'));
  });

  it('returns 400 VALIDATION_ERROR when the body is a JSON array', async () => {
    const response = await client.post('/api/projects', [{ name: 'x' }]);

    expect(response.status).toBe(400);
    expect(response.body.error).toBe('VALIDATION_ERROR');
    expect(await countOfAccount()).toBe(0);
  });

  it('returns 401 UNAUTHORIZED without the identity header', async () => {
    const response = await requestJson(`${app().url}/api/projects`, {
      method: 'POST',
      body: { name: 'x' },
    });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED', /login/i));
  });
});

describe('PATCH /api/projects/:projectId', () => {
  it.each([
    ['the description alone', { description: 'after' }],
    ['name and description together', { name: 'Both', description: '' }],
  ])('changes %s and returns the whole project', async (_case, change) => {
    const project = await buildProject(client, { name: 'Same', description: 'before' });

    const response = await client.patch(`/api/projects/${project.id}`, change);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...project, ...change });
    expect(await storedProject(project.id)).toMatchObject({ name: 'Same', ...change });
  });
});

describe("another account's project", () => {
  it('is 404 NOT_FOUND on GET, PATCH and DELETE and is left unchanged', async () => {
    const owner = apiClient(app().url, uniqueName('owner'));
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
      expect(response.body).toEqual(errorBody('NOT_FOUND', 'Project not found.'));
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
    const response = await requestJson(`${app().url}/readyz`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: { mongo: 'ok' } });
  });

  it('answers an unknown route with a JSON 404', async () => {
    const response = await client.get('/api/nothing-here');

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND', 'Route not found.'));
  });
});
