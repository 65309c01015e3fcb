import { Types } from 'mongoose';
import { createInternalClient, variableSecretContext } from '@platform/shared';
import {
  requestJson,
  TEST_INTERNAL_SECRET,
  uniqueName,
  useRunning,
} from '@platform/shared/testing';
import { apiClient, buildProject, buildService, type ApiClient } from '../test/api-client';
import { ANSWERED_DEFAULTS, SAMPLE_SETTINGS } from '../test/settings';
import { startTestApp } from '../test/test-app';

const app = useRunning(startTestApp);
let client: ApiClient;

beforeEach(() => {
  client = apiClient(app().url);
});

const NOT_FOUND = { error: 'NOT_FOUND', message: expect.stringMatching(/not found/) };

describe('GET /internal/projects/:projectId', () => {
  it("returns exactly accountId and projectId of the caller's project", async () => {
    const project = await buildProject(client);

    const response = await client.get(`/internal/projects/${project.id}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ accountId: client.accountId, projectId: project.id });
  });

  it('answers another service through the shared internal client', async () => {
    const project = await buildProject(client);
    const internal = createInternalClient({
      baseUrl: app().url,
      service: 'projects',
      internalSecret: TEST_INTERNAL_SECRET,
    });

    const body = await internal.getJson(`/internal/projects/${project.id}`, {
      accountId: client.accountId,
    });

    expect(body).toEqual({ accountId: client.accountId, projectId: project.id });
  });

  it("returns 404 for an unknown, malformed, deleted or another account's project", async () => {
    const deleted = await buildProject(client);
    await client.delete(`/api/projects/${deleted.id}`);
    const theirs = await buildProject(apiClient(app().url, uniqueName('owner')));

    for (const projectId of [
      new Types.ObjectId().toHexString(),
      'x'.repeat(24),
      deleted.id,
      theirs.id,
    ]) {
      const response = await client.get(`/internal/projects/${projectId}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
    }
  });

  it('returns 401 UNAUTHORIZED without a valid identity header', async () => {
    const project = await buildProject(client);

    const response = await requestJson(`${app().url}/internal/projects/${project.id}`, {
      headers: { 'x-platform-identity': 'v1.forged.signature' },
    });

    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
  });
});

describe('GET /internal/projects/:projectId/services/:serviceId', () => {
  it('returns exactly accountId, projectId and serviceId', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);

    const response = await client.get(`/internal/projects/${project.id}/services/${service.id}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      projectId: project.id,
      serviceId: service.id,
      accountId: client.accountId,
    });
  });

  it('returns 404 when the service is unknown, malformed, deleted or in another project', async () => {
    const project = await buildProject(client);
    const deleted = await buildService(client, project.id);
    await client.delete(`/api/projects/${project.id}/services/${deleted.id}`);
    const elsewhere = await buildService(client, (await buildProject(client)).id);

    for (const serviceId of [new Types.ObjectId().toHexString(), 'bad', deleted.id, elsewhere.id]) {
      const response = await client.get(`/internal/projects/${project.id}/services/${serviceId}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
  });

  it('returns 404 once the project is deleted, though the service document still exists', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    // With project.deleted held in the outbox, the cascade cannot have removed the service: the
    // 404 comes from the project's mark.
    await app().relay.stop();
    try {
      await client.delete(`/api/projects/${project.id}`);

      const response = await client.get(`/internal/projects/${project.id}/services/${service.id}`);

      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
      expect(await app().models.services.countDocuments({ _id: service.id })).toBe(1);
    } finally {
      app().relay.start();
    }
  });

  it("returns 404 for another account's service, whichever project id is given", async () => {
    const owner = apiClient(app().url, uniqueName('owner'));
    const theirs = await buildProject(owner);
    const service = await buildService(owner, theirs.id);
    const mine = await buildProject(client);

    for (const projectId of [theirs.id, mine.id]) {
      const response = await client.get(`/internal/projects/${projectId}/services/${service.id}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
    }
  });
});

describe('GET /internal/projects/:projectId/services/:serviceId/source', () => {
  const sourceOf = (projectId: string, serviceId: string, who = client) =>
    who.get(`/internal/projects/${projectId}/services/${serviceId}/source`);

  it('returns the settings and the variables, plain values as they are and secrets still sealed', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id, SAMPLE_SETTINGS);
    const variables = `/api/projects/${project.id}/services/${service.id}/variables`;
    await client.put(`${variables}/NODE_ENV`, { value: 'production' });
    await client.put(`${variables}/API_TOKEN`, { value: 'tok-123-secret', secret: true });

    const response = await sourceOf(project.id, service.id);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      accountId: client.accountId,
      projectId: project.id,
      serviceId: service.id,
      ...SAMPLE_SETTINGS,
      variables: [
        { name: 'API_TOKEN', secret: true, sealed: expect.stringMatching(/^v1:/) },
        { name: 'NODE_ENV', secret: false, value: 'production' },
      ],
    });
    expect(JSON.stringify(response.body)).not.toContain('tok-123-secret');
    const sealed = response.body.variables[0].sealed as string;
    expect(app().secretBox.open(sealed, variableSecretContext(service.id, 'API_TOKEN'))).toBe(
      'tok-123-secret',
    );
  });

  it('returns the defaults and no variables for a service created with a name only', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);

    const response = await sourceOf(project.id, service.id);

    expect(response.body).toMatchObject({ ...ANSWERED_DEFAULTS, variables: [] });
  });

  it("returns 404 for another account's, a deleted or an unknown service", async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const deleted = await buildService(client, project.id);
    await client.delete(`/api/projects/${project.id}/services/${deleted.id}`);
    const stranger = apiClient(app().url, uniqueName('stranger'));

    const answers = [
      await sourceOf(project.id, service.id, stranger),
      await sourceOf(project.id, deleted.id),
      await sourceOf(project.id, new Types.ObjectId().toHexString()),
    ];

    expect(answers.map((a) => a.status)).toEqual([404, 404, 404]);
    expect(answers.map((a) => a.body.error)).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND']);
  });
});
