import { useHarness } from '../test/harness';

// The real pipeline and runtime: a restore after the runtime lost its apps, racing a deploy of
// the same service that the pipeline runs at the same time.
const h = useHarness({ pipeline: {} });

const SLOW = 30_000;
const ROUNDS = 6;
// Bounded by rounds, not time: jest's deadline is each wait's own, summed, a guard against a hang.

describe('restoring the live apps while a deploy of the same service runs', () => {
  it(
    'never leaves the older deployment live: the newer one always serves the service',
    async () => {
      const { service, id: first } = await h.newDeployment();
      await h.waitForStatus(service, first, 'DEPLOYED', SLOW);
      const runtime = h.runtime!;
      let live = first;

      for (let round = 0; round < ROUNDS; round++) {
        // The runtime lost its apps (the machine restarted): the restore will start `live` again.
        await runtime.stopService(service.serviceId);
        // A newer deployment of the service (the same build again: nothing is built).
        const res = await h.api.rollback(service, live);
        expect(res.status).toBe(201);
        const newer = res.body.id as string;
        // Half the rounds the restore starts with the deploy, half once the newer is DEPLOYING
        // (its app starting): the two promotions then come in either order.
        if (round % 2 === 1) await h.waitForStatus(service, newer, 'DEPLOYING', SLOW);
        const [, deployed] = await Promise.all([
          h.restoreLiveApps(),
          h.waitForStatus(service, newer, 'DEPLOYED', SLOW),
        ]);

        const serving = (await runtime.list()).filter(
          (r) => r.serviceId === service.serviceId && r.live,
        );
        expect({ round, live: serving.map((r) => r.releaseId.slice(0, 24)) }).toEqual({
          round,
          live: [newer],
        });
        expect(deployed.status).toBe('DEPLOYED');
        live = newer;
      }
    },
    (2 * ROUNDS + 1) * SLOW,
  );
});
