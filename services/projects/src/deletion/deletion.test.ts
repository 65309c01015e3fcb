import {
  createProducer,
  newEvent,
  projectDeletedEvent,
  serviceDeletedEvent,
  TOPICS,
  type ProjectDeletedEvent,
} from '@platform/shared';
import { useRunning, waitFor } from '@platform/shared/testing';
import { apiClient, buildProject, buildService, type ApiClient } from '../test/api-client';
import { startTestApp, useDeletionEvents } from '../test/test-app';

const app = useRunning(startTestApp);
const collector = useDeletionEvents(app);
let client: ApiClient;

beforeEach(() => {
  client = apiClient(app().url);
});

const CASCADE = { timeoutMs: 15_000, what: 'the cascade to remove the documents' };

const projectGone = (projectId: string) => async () =>
  (await app().models.projects.countDocuments({ _id: projectId })) === 0 &&
  (await app().models.services.countDocuments({ projectId })) === 0;

describe('DELETE /api/projects/:projectId', () => {
  it('returns 204 with no body, and from then on the project and its services read as 404', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const servicePath = `/api/projects/${project.id}/services/${service.id}`;

    const response = await client.delete(`/api/projects/${project.id}`);

    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    const reads = [
      await client.get(`/api/projects/${project.id}`),
      await client.patch(`/api/projects/${project.id}`, { description: 'too late' }),
      await client.delete(`/api/projects/${project.id}`),
      await client.get(`/api/projects/${project.id}/services`),
      await client.get(servicePath),
      await client.get(`/internal/projects/${project.id}`),
      await client.get(`/internal/projects/${project.id}/services/${service.id}`),
    ];
    for (const read of reads) {
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
    expect((await client.get('/api/projects')).body).toEqual({ projects: [] });
  });

  it('publishes one project.deleted, keyed by the project id, that matches the shared schema', async () => {
    const project = await buildProject(client);

    await client.delete(`/api/projects/${project.id}`);

    const [message] = await collector().waitFor((m) => m.key === project.id);
    expect(message!.topic).toBe(TOPICS.projectDeleted);
    const event = projectDeletedEvent.parse(message!.value);
    expect(event).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'project.deleted',
      occurredAt: expect.any(String),
      accountId: client.accountId,
      projectId: project.id,
    });
    expect(Object.keys(message!.value).sort()).toEqual(Object.keys(event).sort());
    await waitFor(projectGone(project.id), CASCADE);
    expect(collector().messages.filter((m) => m.key === project.id)).toHaveLength(1);
  });

  it('removes the project and all its services from the database within seconds', async () => {
    const project = await buildProject(client);
    const services = [];
    for (let i = 0; i < 3; i++) services.push(await buildService(client, project.id));
    const survivor = await buildProject(client);
    const survivorService = await buildService(client, survivor.id);

    await client.delete(`/api/projects/${project.id}`);

    await waitFor(projectGone(project.id), CASCADE);
    expect(
      await app().models.services.countDocuments({ _id: { $in: services.map((s) => s.id) } }),
    ).toBe(0);
    expect((await client.get(`/api/projects/${survivor.id}`)).status).toBe(200);
    expect(
      (await client.get(`/api/projects/${survivor.id}/services/${survivorService.id}`)).status,
    ).toBe(200);
  });
});

describe('DELETE /api/projects/:projectId/services/:serviceId', () => {
  it('publishes service.deleted with the service id and removes the document within seconds', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const sibling = await buildService(client, project.id);

    const response = await client.delete(`/api/projects/${project.id}/services/${service.id}`);

    expect(response.status).toBe(204);
    const [message] = await collector().waitFor((m) => m.key === service.id);
    expect(message!.topic).toBe(TOPICS.serviceDeleted);
    expect(serviceDeletedEvent.parse(message!.value)).toEqual({
      eventId: expect.any(String),
      type: 'service.deleted',
      occurredAt: expect.any(String),
      accountId: client.accountId,
      projectId: project.id,
      serviceId: service.id,
    });
    await waitFor(
      async () => (await app().models.services.countDocuments({ _id: service.id })) === 0,
      CASCADE,
    );
    expect((await client.get(`/api/projects/${project.id}/services`)).body).toEqual({
      services: [sibling],
    });
  });
});

describe('the deletion consumer', () => {
  it('publishes and removes a service deleted just before its project, without losing its event', async () => {
    const project = await buildProject(client);
    const deletedFirst = await buildService(client, project.id);
    const live = await buildService(client, project.id);
    // Both events wait in their outboxes, so the project's cascade sees the service's pending one.
    await app().relay.stop();
    try {
      expect(
        (await client.delete(`/api/projects/${project.id}/services/${deletedFirst.id}`)).status,
      ).toBe(204);
      expect((await client.delete(`/api/projects/${project.id}`)).status).toBe(204);
    } finally {
      app().relay.start();
    }

    await waitFor(projectGone(project.id), CASCADE);
    expect(collector().messages.filter((m) => m.key === deletedFirst.id)).toHaveLength(1);
    expect(collector().messages.filter((m) => m.key === project.id)).toHaveLength(1);
    expect(await app().models.services.countDocuments({ _id: live.id })).toBe(0);
  });

  it('ignores a project.deleted event that names a live project', async () => {
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const stray = newEvent<ProjectDeletedEvent>({
      type: 'project.deleted',
      accountId: client.accountId,
      projectId: project.id,
    });
    const producer = createProducer(app().kafka);
    await producer.connect();
    try {
      await producer.send({
        topic: TOPICS.projectDeleted,
        messages: [{ key: project.id, value: JSON.stringify(stray) }],
      });
    } finally {
      await producer.disconnect();
    }

    // The consumer records every event it handled; once this one is there, it has been handled.
    await waitFor(
      async () =>
        (await app()
          .connection.collection('processed_events')
          .countDocuments({ _id: `${app().groupId}:${stray.eventId}` as never })) === 1,
      { timeoutMs: 15_000, what: 'the stray event to be handled' },
    );
    expect((await client.get(`/api/projects/${project.id}`)).status).toBe(200);
    expect((await client.get(`/api/projects/${project.id}/services/${service.id}`)).status).toBe(
      200,
    );
  });
});
