import { useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';

// No pipeline here: deployments stay BUILDING until a test moves them.
const h = useHarness();

type Answer = { status: number; body: { id: string } };

/**
 * Each way of creating a deployment: `prepare` makes what it needs, and returns the request
 * whose calls to the projects service are counted.
 */
const creations: [string, (service: OwnedService) => Promise<() => Promise<Answer>>][] = [
  ['a trigger', async (s) => () => h.api.trigger(s, { commitHash: 'abcdef1' })],
  [
    'a trigger with a new Idempotency-Key',
    async (s) => () => h.api.trigger(s, { commitHash: 'abcdef2' }, { 'Idempotency-Key': 'k1' }),
  ],
  [
    'a repeat of an idempotent trigger',
    async (s) => {
      await h.api.trigger(s, { commitHash: 'abcdef3' }, { 'Idempotency-Key': 'k2' });
      return () => h.api.trigger(s, { commitHash: 'abcdef3' }, { 'Idempotency-Key': 'k2' });
    },
  ],
  [
    'a redeploy',
    async (s) => {
      const first = await h.api.trigger(s, { commitHash: 'abcdef4' });
      return () => h.api.redeploy(s, first.body.id);
    },
  ],
];

describe('creating a deployment', () => {
  it.each(creations)(
    '%s asks the projects service once: for the source, which says whose the service is',
    async (_name, prepare) => {
      const service = h.projects.addService();
      const request = await prepare(service);

      let status = 0;
      const calls = await h.projects.callsDuring(service.projectId, async () => {
        status = (await request()).status;
      });

      expect(status).toBe(201);
      expect(calls).toEqual({
        count: 1,
        paths: [`/internal/projects/${service.projectId}/services/${service.serviceId}/source`],
      });
    },
  );

  it('a rollback asks the projects service once, also when it is refused', async () => {
    const service = h.projects.addService();
    const building = await h.api.trigger(service, { commitHash: 'abcdef5' });

    let status = 0;
    const calls = await h.projects.callsDuring(service.projectId, async () => {
      status = (await h.api.rollback(service, building.body.id)).status;
    });

    expect(status).toBe(409);
    expect(calls.count).toBe(1);
  });

  it('answers 404 NOT_FOUND for another account’s service to each way, and creates and claims nothing', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: 'abcdef6' });
    const stranger = { ...service, accountId: buildService().accountId };
    const key = { 'Idempotency-Key': 'k-stranger' };

    const answers = await Promise.all([
      h.api.trigger(stranger, { commitHash: 'abcdef7' }, key),
      h.api.trigger(stranger, { commitHash: 'nope' }),
      h.api.redeploy(stranger, created.body.id, key),
      h.api.rollback(stranger, created.body.id, key),
    ]);

    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(1);
    expect(
      await h.models.idempotencyKeys.countDocuments({ _id: `${stranger.accountId}:k-stranger` }),
    ).toBe(0);
  });
});
