// Stops the shared Kafka server for a moment: a `.fault.test.ts`, so `npm test` runs it alone,
// after the other suites; Kafka is always started again before the file ends.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Kafka } from 'kafkajs';
import { projectDeletedEvent, TOPICS } from '@platform/shared';
import { INFRA_SCRIPT, uniqueName, waitFor } from '@platform/shared/testing';
import { apiClient, buildProject, buildService } from '../test/api-client';
import { startTestApp, type TestApp } from '../test/test-app';

const run = promisify(execFile);
const infra = (action: 'start' | 'stop') =>
  run('bash', [INFRA_SCRIPT, action, 'kafka'], { timeout: 120_000 });

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  // Whatever happened above, the other suites get their broker back.
  await infra('start');
  await app?.close();
}, 150_000);

/** Where each partition of `topic` ends now: anything published later is at or after it. */
async function endOffsets(kafka: Kafka, topic: string) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).map(({ partition, high }) => ({
      partition,
      offset: high,
    }));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads `topic` from the given offsets in a group of its own. A group reading "from latest"
 * could start after the relay had already published once the broker was back.
 */
async function readFrom(
  kafka: Kafka,
  topic: string,
  offsets: { partition: number; offset: string }[],
) {
  const groupId = uniqueName('projects-outage-reader');
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.setOffsets({ groupId, topic, partitions: offsets });
  } finally {
    await admin.disconnect();
  }
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
  const messages: { key: string | null; value: unknown }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({
    eachMessage: async ({ message }) => {
      messages.push({
        key: message.key?.toString('utf8') ?? null,
        value: JSON.parse(message.value?.toString('utf8') ?? 'null'),
      });
    },
  });
  return { messages, stop: () => consumer.disconnect() };
}

describe('a project deleted while Kafka is down', () => {
  it('is 404 at once and its project.deleted reaches the topic once Kafka is back', async () => {
    const client = apiClient(app.url);
    const project = await buildProject(client);
    const service = await buildService(client, project.id);
    const before = await endOffsets(app.kafka, TOPICS.projectDeleted);

    await infra('stop');
    let queuedEventId: string | undefined;
    try {
      const response = await client.delete(`/api/projects/${project.id}`);

      expect(response.status).toBe(204);
      expect((await client.get(`/api/projects/${project.id}`)).status).toBe(404);
      expect((await client.get(`/api/projects/${project.id}/services/${service.id}`)).status).toBe(
        404,
      );
      expect((await client.get(`/internal/projects/${project.id}`)).status).toBe(404);
      const stored = await app.models.projects.findById(project.id).lean();
      expect(stored?.outboxPending).toBe(true);
      expect(stored?.outbox).toHaveLength(1);
      queuedEventId = stored!.outbox[0]!.eventId;
    } finally {
      await infra('start');
    }

    const reader = await readFrom(app.kafka, TOPICS.projectDeleted, before);
    try {
      const message = await waitFor(() => reader.messages.find((m) => m.key === project.id), {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'project.deleted after the outage',
      });
      expect(projectDeletedEvent.parse(message.value)).toMatchObject({
        eventId: queuedEventId,
        type: 'project.deleted',
        accountId: client.accountId,
        projectId: project.id,
      });
      // The deletion consumer runs here too: once the event is out, the cascade may have removed
      // the document already.
      await waitFor(
        async () => {
          const stored = await app.models.projects.findById(project.id).lean();
          return !stored || (stored.outbox.length === 0 && stored.outboxPending === false);
        },
        { timeoutMs: 10_000, what: 'the outbox to empty' },
      );
    } finally {
      await reader.stop();
    }
  }, 180_000);
});
