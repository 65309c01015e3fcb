import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signIdentity } from '@platform/shared';
import { uniqueName, waitFor } from '@platform/shared/testing';
import { waitForDeployment } from '../support/client';
import { clientWithService } from '../support/fixtures';
import {
  E2E_INTERNAL_SECRET,
  requireLocalStack,
  startServiceProcess,
  type ServiceProcess,
} from '../support/stack';

const PORT = 14104;

describe('the webhooks service killed with deliveries pending', () => {
  beforeAll(requireLocalStack);

  it('delivers every pending event after a SIGKILL and a restart', async () => {
    // A receiver that refuses everything until told otherwise: deliveries pile up as retries.
    let accepting = false;
    const accepted: { headers: IncomingHttpHeaders; body: any }[] = [];
    let refused = 0;
    const receiver = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        if (!accepting) {
          refused += 1;
          res.writeHead(503).end();
          return;
        }
        accepted.push({ headers: req.headers, body: JSON.parse(raw) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    const env = {
      MONGO_DB: uniqueName('fault_webhooks'),
      // One group across the kill and the restart, as a real restart keeps it.
      KAFKA_GROUP_ID: uniqueName('fault-webhooks'),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s',
      // An attempt cut off by the kill is retried once its lease (timeout + 30 s) runs out.
      WEBHOOK_TIMEOUT_MS: '2000',
    };
    let webhooks: ServiceProcess | undefined = await startServiceProcess('webhooks', PORT, env);
    try {
      const { client, accountId, projectId, deploymentsPath } =
        await clientWithService('Webhooks killed');
      // Subscribe on this instance directly, as the gateway would: with a signed identity.
      const created = await fetch(`${webhooks.url}/api/projects/${projectId}/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-platform-identity': signIdentity(accountId, E2E_INTERNAL_SECRET),
        },
        body: JSON.stringify({ url: receiverUrl }),
      });
      expect(created.status).toBe(201);

      const ids: string[] = [];
      for (const commitHash of ['aaaaaaa', 'bbbbbbb'])
        ids.push((await client.post(deploymentsPath, { commitHash })).body.id);
      for (const id of ids)
        await waitForDeployment(client, `${deploymentsPath}/${id}`, ['DEPLOYED']);
      await waitFor(() => refused >= 6, { timeoutMs: 90_000, what: 'six refused first attempts' });

      await webhooks.kill('SIGKILL');
      webhooks = undefined;
      accepting = true;
      webhooks = await startServiceProcess('webhooks', PORT, env);

      const delivered = await waitFor(
        () => {
          const mine = accepted.filter((w) => ids.includes(w.body.data?.deploymentId));
          return new Set(mine.map((w) => w.headers['webhook-id'])).size >= 6 ? mine : null;
        },
        { timeoutMs: 150_000, intervalMs: 250, what: 'all six events after the restart' },
      );
      const changes = new Set(
        delivered.map((w) => `${w.body.data.deploymentId}:${w.body.data.status}`),
      );
      expect(changes.size).toBe(6);
    } finally {
      await webhooks?.kill('SIGTERM');
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  }, 300_000);
});
