// What only services do: live under a project, which hides them when it is missing, deleted or
// another account's. What they do as projects do is tested over both in
// names/named-resources.test.ts.
import { Types } from 'mongoose';
import { errorBody, uniqueName, useRunning } from '@platform/shared/testing';
import { apiClient, buildProject, buildService, type ApiClient } from '../test/api-client';
import { startTestApp } from '../test/test-app';

const app = useRunning(startTestApp);
let client: ApiClient;

beforeEach(() => {
  client = apiClient(app().url);
});

const servicesPath = (projectId: string) => `/api/projects/${projectId}/services`;
const storedService = (id: string) => app().models.services.findById(id).lean();
const PROJECT_NOT_FOUND = errorBody('NOT_FOUND', 'Project not found.');
const SERVICE_NOT_FOUND = errorBody('NOT_FOUND', 'Service not found.');

/** Sends each request and expects every answer to be `body` with 404. */
async function expectAll404(
  requests: (() => Promise<{ status: number; body: unknown }>)[],
  body: unknown,
) {
  for (const request of requests) {
    const response = await request();
    expect(response.status).toBe(404);
    expect(response.body).toEqual(body);
  }
}

describe('POST /api/projects/:projectId/services', () => {
  it('returns 404 NOT_FOUND for an unknown, malformed or deleted project', async () => {
    const deleted = await buildProject(client);
    expect((await client.delete(`/api/projects/${deleted.id}`)).status).toBe(204);

    await expectAll404(
      [new Types.ObjectId().toHexString(), 'nope', deleted.id].map(
        (projectId) => () => client.post(servicesPath(projectId), { name: 'orphan' }),
      ),
      PROJECT_NOT_FOUND,
    );
    expect(await app().models.services.countDocuments({ accountId: client.accountId })).toBe(0);
  });
});

describe('GET /api/projects/:projectId/services/:serviceId', () => {
  it('returns 404 NOT_FOUND for a service of another project of the account', async () => {
    const project = await buildProject(client);
    const elsewhere = await buildService(client, (await buildProject(client)).id);

    const response = await client.get(`${servicesPath(project.id)}/${elsewhere.id}`);

    expect(response.status).toBe(404);
    expect(response.body).toEqual(SERVICE_NOT_FOUND);
  });
});

describe("another account's services", () => {
  it('are 404 NOT_FOUND on every services route and are left unchanged', async () => {
    const owner = apiClient(app().url, uniqueName('owner'));
    const theirs = await buildProject(owner);
    const service = await buildService(owner, theirs.id, { name: 'private' });
    const one = `${servicesPath(theirs.id)}/${service.id}`;

    await expectAll404(
      [
        () => client.get(servicesPath(theirs.id)),
        () => client.post(servicesPath(theirs.id), { name: 'intruder' }),
        () => client.get(one),
        () => client.patch(one, { name: 'hijacked' }),
        () => client.delete(one),
      ],
      PROJECT_NOT_FOUND,
    );
    expect(await storedService(service.id)).toMatchObject({
      name: 'private',
      deletedAt: null,
      outbox: [],
    });
    expect(await app().models.services.countDocuments({ projectId: theirs.id })).toBe(1);
  });

  it('stay 404 when the caller names its own project with their service id', async () => {
    const owner = apiClient(app().url, uniqueName('owner'));
    const service = await buildService(owner, (await buildProject(owner)).id);
    const mixed = `${servicesPath((await buildProject(client)).id)}/${service.id}`;

    await expectAll404(
      [
        () => client.get(mixed),
        () => client.patch(mixed, { name: 'hijacked' }),
        () => client.delete(mixed),
      ],
      SERVICE_NOT_FOUND,
    );
    expect(await storedService(service.id)).toMatchObject({ deletedAt: null, outbox: [] });
  });
});

describe('the services of a deleted project', () => {
  it('are 404 NOT_FOUND on every route from the moment the project is deleted', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const one = `${servicesPath(project.id)}/${service.id}`;
    expect((await client.delete(`/api/projects/${project.id}`)).status).toBe(204);

    await expectAll404(
      [
        () => client.get(servicesPath(project.id)),
        () => client.get(one),
        () => client.patch(one, { name: 'late' }),
        () => client.delete(one),
      ],
      PROJECT_NOT_FOUND,
    );
  });
});
