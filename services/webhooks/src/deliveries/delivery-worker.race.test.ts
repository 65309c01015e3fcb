import { waitFor } from '@platform/shared/testing';
import { buildStatusChange, subscribe, useTestBed, type TestService } from '../test/test-service';

// Two replicas of the service over one database, each with its own connection and delivery
// worker, racing for the same due deliveries. Real MongoDB and real receivers; the only retry is
// an hour away, so a delivery sent twice cannot hide behind a later success. The deliveries are
// recorded by a third instance whose worker never runs, so that all of them are due when both
// workers start at once.
const bed = useTestBed();
let dbName: string;

// Each test has a database of its own and stops its replicas, so no worker outlives its test.
beforeEach(() => {
  dbName = bed.newDatabase('webhooks_race');
});

afterEach(() => bed.stopAll());

/** An instance of the service over the test's database; its worker waits for `startWorkers`. */
const replica = () => bed.start({ dbName, worker: false, retrySchedule: [3_600_000] });

/** Starts the replicas' workers in the same tick, so that their first claims collide. */
function startWorkers(...replicas: TestService[]) {
  for (const r of replicas) r.worker.start();
}

const deliveriesOf = (service: TestService, webhookIds: string[]) =>
  service.models.deliveries.find({ webhookId: { $in: webhookIds } }).lean();

/** Stops the replicas' workers; each waits for its sends under way (or aborts them). */
async function stopWorkers(...replicas: TestService[]) {
  await Promise.all(replicas.map((r) => r.worker.stop()));
}

describe('two delivery workers on one queue', () => {
  it('sends each of 50 due deliveries exactly once and records each as delivered with one attempt', async () => {
    const target = await bed.receiver(() => ({ status: 204, delayMs: 5 }));
    const [recorder, first, second] = await Promise.all([replica(), replica(), replica()]);
    // Two projects, five webhooks: an event of a project goes to each of its webhooks.
    const projectA = bed.project(recorder);
    const projectB = bed.project(recorder);
    const paths = { a0: projectA, a1: projectA, a2: projectA, b0: projectB, b1: projectB };
    const webhookIds: string[] = [];
    for (const [path, p] of Object.entries(paths))
      webhookIds.push((await subscribe(p, `${target.url}/${path}`)).id);
    let recorded = 0;
    for (let i = 0; i < 10; i++) {
      for (const p of [projectA, projectB]) {
        const event = buildStatusChange(p);
        recorded += await recorder.deliveries.recordStatusChange(event);
      }
    }
    expect(recorded).toBe(50);

    startWorkers(first, second);
    await target.waitForRequests(50, 20_000);
    await waitFor(
      async () => (await deliveriesOf(recorder, webhookIds)).every((d) => d.status === 'succeeded'),
      { what: 'every delivery recorded as delivered', timeoutMs: 20_000 },
    );
    // Stopped workers send nothing more: a second send of any delivery, were one under way,
    // has reached the receiver by the time both have stopped.
    await stopWorkers(first, second);

    const sends = new Map<string, number>();
    for (const request of target.requests) {
      const key = `${request.path} ${String(request.headers['webhook-id'])}`;
      sends.set(key, (sends.get(key) ?? 0) + 1);
    }
    const stored = await deliveriesOf(recorder, webhookIds);
    const expected = stored.map((d) => {
      const path = Object.keys(paths)[webhookIds.indexOf(d.webhookId.toHexString())];
      return `/${path} ${d.eventId}`;
    });
    expect(stored).toHaveLength(50);
    expect([...sends.entries()].filter(([, count]) => count > 1)).toEqual([]);
    expect([...sends.keys()].sort()).toEqual(expected.sort());
    expect(target.requests).toHaveLength(50);
    for (const delivery of stored) {
      expect(delivery).toMatchObject({
        status: 'succeeded',
        attemptCount: 1,
        lastStatusCode: 204,
        nextAttemptAt: null,
        leaseOwner: null,
        leaseUntil: null,
      });
      expect(delivery.attempts.map((a) => a.statusCode)).toEqual([204]);
    }
    const log = await projectA.api.get(`${projectA.base}/${webhookIds[0]}/deliveries?limit=100`);
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toHaveLength(10);
    for (const summary of log.body.deliveries)
      expect(summary).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 204 });
  });

  it('leaves a webhook that answers 410 while the other worker claims its deliveries disabled and sends it nothing more', async () => {
    const gone = await bed.receiver(() => ({ status: 410 }));
    const healthy = await bed.receiver(() => ({ status: 204, delayMs: 5 }));
    const [recorder, first, second] = await Promise.all([replica(), replica(), replica()]);
    const p = bed.project(recorder);
    const goneId = (await subscribe(p, `${gone.url}/hook`)).id;
    const healthyId = (await subscribe(p, `${healthy.url}/hook`)).id;
    for (let i = 0; i < 20; i++) {
      const event = buildStatusChange(p);
      expect(await recorder.deliveries.recordStatusChange(event)).toBe(2);
    }

    startWorkers(first, second);
    await waitFor(
      async () =>
        (await deliveriesOf(recorder, [goneId, healthyId])).every((d) => d.status !== 'pending'),
      { what: 'no delivery left pending', timeoutMs: 20_000 },
    );
    const sentBeforeSettling = gone.requests.length;
    await stopWorkers(first, second);

    // Each worker sends a webhook one request at a time and, after a 410, nothing more until
    // the webhook is off: so at most one send per worker, those under way when it went off.
    expect(gone.requests.length).toBe(sentBeforeSettling);
    expect(gone.requests.length).toBeGreaterThanOrEqual(1);
    expect(gone.requests.length).toBeLessThanOrEqual(2);
    const sentIds = gone.requests.map((r) => String(r.headers['webhook-id']));
    expect(new Set(sentIds).size).toBe(sentIds.length);

    const shown = await p.api.get(`${p.base}/${goneId}`);
    expect([shown.status, shown.body.enabled]).toEqual([200, false]);
    const test = await p.api.post(`${p.base}/${goneId}/test`);
    expect([test.status, test.body.error]).toEqual([409, 'CONFLICT']);
    expect(await recorder.models.webhooks.findById(goneId).lean()).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });

    const toGone = await deliveriesOf(recorder, [goneId]);
    expect(toGone).toHaveLength(20);
    for (const delivery of toGone) {
      const sent = sentIds.includes(delivery.eventId);
      expect(delivery).toMatchObject({
        status: 'failed',
        attemptCount: sent ? 1 : 0,
        lastStatusCode: sent ? 410 : null,
        nextAttemptAt: null,
        leaseOwner: null,
      });
    }
    // The project's other webhook got every event, once.
    const toHealthy = await deliveriesOf(recorder, [healthyId]);
    expect(toHealthy.map((d) => [d.status, d.attemptCount])).toEqual(
      Array(20).fill(['succeeded', 1]),
    );
    expect(new Set(healthy.requests.map((r) => r.headers['webhook-id'])).size).toBe(20);
    expect(healthy.requests).toHaveLength(20);
  });
});
