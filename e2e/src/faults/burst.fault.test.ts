import { setTimeout as sleep } from 'node:timers/promises';
import { createKafka, TOPICS } from '@platform/shared';
import { collectMessages, testInfraUrls, testLogger, waitFor } from '@platform/shared/testing';
import { clientWithApp } from '../support/fixtures';
import { requireLocalStack } from '../support/stack';

describe('a burst of 200 concurrent triggers on one service', () => {
  beforeAll(requireLocalStack);

  it('records every deployment, each with its own status events; the newest wins', async () => {
    const kafka = createKafka({
      ...testInfraUrls().kafka,
      clientId: 'burst-test',
      logger: testLogger(),
    });
    const collector = await collectMessages(kafka, [TOPICS.deploymentStatusChanged]);
    let closeRepository: (() => Promise<void>) | undefined;
    try {
      const { client, deploymentsPath, repository, commit } = await clientWithApp('Burst');
      closeRepository = () => repository.close();
      // A gateway short of breath answers 503 with Retry-After (contracts.md); a client then
      // waits as told and sends the same request again under the same Idempotency-Key, which
      // makes the repeat safe. The test does what such a client does, and counts the repeats.
      let repeats = 0;
      const trigger = async (i: number) => {
        const key = { 'idempotency-key': `burst-${i}` };
        let response = await client.post(deploymentsPath, { commitHash: commit.hash }, key);
        for (let tries = 1; response.status === 503 && tries <= 5; tries++) {
          repeats++;
          await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
          response = await client.post(deploymentsPath, { commitHash: commit.hash }, key);
        }
        return response;
      };
      const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => trigger(i)));
      if (repeats > 0) console.info(`burst: ${repeats} triggers repeated after a 503`);
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

      // Each one ends, with its own final event: superseded by a newer one while BUILDING
      // (CANCELLED), or run to the end; the newest of them is what the service runs.
      const finals = await waitFor(
        () => {
          const ended = new Map(
            collector.messages
              .filter(
                (m) => ids.has(m.key ?? '') && ['CANCELLED', 'DEPLOYED'].includes(m.value.status),
              )
              .map((m) => [m.key, m.value.status as string]),
          );
          return ended.size === 200 ? ended : null;
        },
        { timeoutMs: 240_000, intervalMs: 500, what: '200 final events' },
      );
      const newest = first.body.deployments[0].id as string;
      expect(finals.get(newest)).toBe('DEPLOYED');
      expect([...finals.values()].filter((s) => s === 'CANCELLED').length).toBeGreaterThan(100);
    } finally {
      await collector.stop();
      await closeRepository?.();
    }
  }, 300_000);
});
