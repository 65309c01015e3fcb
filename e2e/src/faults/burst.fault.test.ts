import { createKafka, TOPICS } from '@platform/shared';
import { collectMessages, testInfraUrls, testLogger, waitFor } from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import { requireLocalStack } from '../support/stack';

describe('a burst of 200 concurrent triggers on one service', () => {
  beforeAll(requireLocalStack);

  it('records every deployment, each with its own status events', async () => {
    const kafka = createKafka({
      ...testInfraUrls().kafka,
      clientId: 'burst-test',
      logger: testLogger(),
    });
    const collector = await collectMessages(kafka, [TOPICS.deploymentStatusChanged]);
    try {
      const { client, deploymentsPath } = await clientWithService('Burst');
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          client.post(deploymentsPath, { commitHash: (0x1000000 + i).toString(16) }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(200).fill(201));
      const ids = new Set(responses.map((r) => r.body.id as string));
      expect(ids.size).toBe(200);

      const first = await client.get(`${deploymentsPath}?limit=100`);
      const second = await client.get(
        `${deploymentsPath}?limit=100&cursor=${first.body.nextCursor}`,
      );
      const listed = [...first.body.deployments, ...second.body.deployments].map((d: any) => d.id);
      expect(new Set(listed)).toEqual(ids);
      expect(second.body.nextCursor).toBeUndefined();

      const building = await collector.waitFor(
        (m) => ids.has(m.key ?? '') && m.value.status === 'BUILDING',
        200,
        60_000,
      );
      expect(new Set(building.map((m) => m.value.deploymentId)).size).toBe(200);
      expect(new Set(building.map((m) => m.value.eventId)).size).toBe(200);
      for (const message of building) expect(message.key).toBe(message.value.deploymentId);

      // Every one of them runs through the pipeline to the end, with its own events.
      await waitFor(
        () =>
          new Set(
            collector.messages
              .filter((m) => ids.has(m.key ?? '') && m.value.status === 'DEPLOYED')
              .map((m) => m.key),
          ).size === 200,
        { timeoutMs: 240_000, intervalMs: 500, what: '200 DEPLOYED events' },
      );
    } finally {
      await collector.stop();
    }
  }, 300_000);
});
