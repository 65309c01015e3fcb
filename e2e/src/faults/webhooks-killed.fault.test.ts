import { requestJson, waitFor } from '@platform/shared/testing';
import { waitForDeployment } from '../support/client';
import { clientWithApp } from '../support/fixtures';
import { startReceiver } from '../support/receiver';
import { requireLocalStack, stackSecret, startKillableService } from '../support/stack';

const PORT = 14104;

describe('the webhooks service killed with deliveries pending', () => {
  beforeAll(requireLocalStack);

  it('delivers every pending event after a SIGKILL and a restart', async () => {
    // A receiver that refuses everything until told otherwise: deliveries pile up as retries.
    let accepting = false;
    const receiver = await startReceiver({ accepting: () => accepting });
    const webhooks = await startKillableService('webhooks', PORT, {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s',
      // An attempt cut off by the kill is retried once its lease (timeout + 30 s) runs out.
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    const closers: (() => Promise<void>)[] = [];
    try {
      const { client, accountId, projectId, deploymentsPath, repository, commit } =
        await clientWithApp('Webhooks killed');
      closers.push(() => repository.close());
      // Subscribe on this instance directly, as the gateway would: with a signed identity.
      const created = await requestJson(`${webhooks.url}/api/projects/${projectId}/webhooks`, {
        method: 'POST',
        identity: { accountId, audience: 'webhooks', secret: stackSecret('E2E_INTERNAL_SECRET') },
        body: { url: receiver.url },
      });
      expect(created.status).toBe(201);

      // One after the other: a newer deployment of a service cancels one still BUILDING.
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const id = (await client.post(deploymentsPath, { commitHash: commit.hash })).body.id;
        await waitForDeployment(client, `${deploymentsPath}/${id}`, ['DEPLOYED']);
        ids.push(id);
      }
      await waitFor(() => receiver.refused() >= 6, {
        timeoutMs: 90_000,
        what: 'six refused first attempts',
      });

      await webhooks.crash();
      accepting = true;
      await webhooks.restart();

      const delivered = await waitFor(
        () => {
          const mine = receiver.received.filter((w) => ids.includes(w.body.data?.deploymentId));
          return new Set(mine.map((w) => w.headers['webhook-id'])).size >= 6 ? mine : null;
        },
        { timeoutMs: 150_000, intervalMs: 250, what: 'all six events after the restart' },
      );
      const changes = new Set(
        delivered.map((w) => `${w.body.data.deploymentId}:${w.body.data.status}`),
      );
      expect(changes.size).toBe(6);
    } finally {
      await webhooks.stop();
      await receiver.close();
      for (const close of closers) await close();
    }
  }, 300_000);
});
