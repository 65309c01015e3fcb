import { waitFor } from '@platform/shared/testing';
import { waitForDeployment } from '../support/client';
import { clientWithApp } from '../support/fixtures';
import { infra } from '../support/infra';
import { startReceiver, verifyStandardWebhook } from '../support/receiver';
import { requireLocalStack } from '../support/stack';
import { setTimeout as delay } from 'node:timers/promises';

describe('Kafka stopped while deployments change status', () => {
  beforeAll(requireLocalStack);
  afterAll(() => infra('start', 'kafka'));

  it('delivers every status change as a webhook once Kafka is back, each event under one webhook-id', async () => {
    const receiver = await startReceiver();
    let closeRepository: (() => Promise<void>) | undefined;
    try {
      const { client, projectPath, deploymentsPath, repository, commit } =
        await clientWithApp('Kafka outage');
      closeRepository = () => repository.close();
      const webhook = await client.post(`${projectPath}/webhooks`, { url: receiver.url });
      expect(webhook.status).toBe(201);

      await infra('stop', 'kafka');
      // The pipeline and the API keep working without the broker: events wait in the outbox.
      // One after the other: a newer deployment of a service cancels one still BUILDING.
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await client.post(deploymentsPath, { commitHash: commit.hash });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
        expect(
          (
            await waitForDeployment(client, `${deploymentsPath}/${res.body.id}`, [
              'DEPLOYED',
              'FAILED',
            ])
          ).status,
        ).toBe('DEPLOYED');
      }
      expect(receiver.received.filter((w) => ids.includes(w.body.data?.deploymentId))).toHaveLength(
        0,
      );

      await infra('start', 'kafka');
      const mine = () => receiver.received.filter((w) => ids.includes(w.body.data?.deploymentId));
      await waitFor(() => new Set(mine().map((w) => w.headers['webhook-id'])).size >= 9, {
        timeoutMs: 90_000,
        intervalMs: 250,
        what: 'nine distinct webhooks after Kafka returned',
      });
      await delay(2_000); // room for a stray duplicate to show up

      const byChange = new Map<string, Set<string>>();
      for (const hook of mine()) {
        expect(verifyStandardWebhook(webhook.body.secret, hook)).toBe(true);
        const change = `${hook.body.data.deploymentId}:${hook.body.data.status}`;
        byChange.set(
          change,
          (byChange.get(change) ?? new Set()).add(String(hook.headers['webhook-id'])),
        );
      }
      expect(byChange.size).toBe(9);
      for (const [, webhookIds] of byChange) expect(webhookIds.size).toBe(1);
      for (const id of ids) {
        const statuses = [...byChange.keys()]
          .filter((k) => k.startsWith(id))
          .map((k) => k.split(':')[1]);
        expect(statuses.sort()).toEqual(['BUILDING', 'DEPLOYED', 'DEPLOYING']);
      }
    } finally {
      await receiver.close();
      await closeRepository?.();
    }
  }, 240_000);
});
