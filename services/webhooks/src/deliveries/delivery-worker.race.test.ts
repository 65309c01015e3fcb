import { uniqueName, waitFor } from '@platform/shared/testing';
import { startProjectsStub, type ProjectsStub } from '../test/projects-stub';
import { startReceiver, type Receiver } from '../test/receiver';
import {
  buildProject,
  buildStatusChange,
  dropDatabase,
  startTestService,
  type TestService,
} from '../test/test-service';

// Two replicas of the service over one database, each with its own connection and delivery
// worker, racing for the same due deliveries. Real MongoDB and real receivers; no retries, so a
// delivery sent twice cannot hide behind a later success. The deliveries are recorded by a third
// instance whose worker never runs, so that all of them are due when both workers start at once.
let projects: ProjectsStub;
let dbName: string;
const databases: string[] = [];
const receivers: Receiver[] = [];
const services: TestService[] = [];

beforeAll(async () => {
  projects = await startProjectsStub();
});

// Each test has a database of its own and stops its replicas, so no worker outlives its test.
beforeEach(() => {
  dbName = uniqueName('webhooks_race');
  databases.push(dbName);
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await projects.close();
  await Promise.all(databases.map(dropDatabase));
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

/** An instance of the service over the test's database; its worker waits for `startWorkers`. */
async function replica() {
  const service = await startTestService({
    dbName,
    projectsUrl: projects.url,
    worker: false,
    retrySchedule: [],
  });
  services.push(service);
  return service;
}

/** Starts the replicas' workers in the same tick, so that their first claims collide. */
function startWorkers(...replicas: TestService[]) {
  for (const r of replicas) r.components.worker.start();
}

async function subscribe(p: ReturnType<typeof buildProject>, url: string) {
  const res = await p.api.post(p.base, { url });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const deliveriesOf = (service: TestService, webhookIds: string[]) =>
  service.components.deliveriesRepository.model.find({ webhookId: { $in: webhookIds } }).lean();

/** Stops the replicas' workers; each waits for its sends under way (or aborts them). */
async function stopWorkers(...replicas: TestService[]) {
  await Promise.all(replicas.map((r) => r.components.worker.stop()));
}

describe('two delivery workers on one queue', () => {
  it('sends each of 50 due deliveries exactly once and records each as delivered with one attempt', async () => {
    const target = await receiver(() => ({ status: 204, delayMs: 5 }));
    const recorder = await replica();
    const [first, second] = [await replica(), await replica()];
    // Two projects, five webhooks: an event of a project goes to each of its webhooks.
    const projectA = buildProject(recorder.url, projects);
    const projectB = buildProject(recorder.url, projects);
    const webhookIds = [
      await subscribe(projectA, `${target.url}/a0`),
      await subscribe(projectA, `${target.url}/a1`),
      await subscribe(projectA, `${target.url}/a2`),
      await subscribe(projectB, `${target.url}/b0`),
      await subscribe(projectB, `${target.url}/b1`),
    ];
    let recorded = 0;
    for (let i = 0; i < 10; i++) {
      for (const p of [projectA, projectB]) {
        const event = buildStatusChange({ accountId: p.accountId, projectId: p.projectId });
        recorded += await recorder.components.deliveries.recordStatusChange(event);
      }
    }
    expect(recorded).toBe(50);

    startWorkers(first!, second!);
    await target.waitForRequests(50, 20_000);
    await waitFor(
      async () => (await deliveriesOf(recorder, webhookIds)).every((d) => d.status === 'succeeded'),
      { what: 'every delivery recorded as delivered', timeoutMs: 20_000 },
    );
    // Stopped workers send nothing more: a second send of any delivery, were one under way,
    // has reached the receiver by the time both have stopped.
    await stopWorkers(first!, second!);

    const sends = new Map<string, number>();
    for (const request of target.requests) {
      const key = `${request.path} ${String(request.headers['webhook-id'])}`;
      sends.set(key, (sends.get(key) ?? 0) + 1);
    }
    const stored = await deliveriesOf(recorder, webhookIds);
    const expected = stored.map((d) => {
      const path = ['a0', 'a1', 'a2', 'b0', 'b1'][webhookIds.indexOf(d.webhookId.toHexString())];
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
    const gone = await receiver(() => ({ status: 410 }));
    const healthy = await receiver(() => ({ status: 204, delayMs: 5 }));
    const recorder = await replica();
    const [first, second] = [await replica(), await replica()];
    const p = buildProject(recorder.url, projects);
    const goneId = await subscribe(p, `${gone.url}/hook`);
    const healthyId = await subscribe(p, `${healthy.url}/hook`);
    for (let i = 0; i < 20; i++) {
      const event = buildStatusChange({ accountId: p.accountId, projectId: p.projectId });
      expect(await recorder.components.deliveries.recordStatusChange(event)).toBe(2);
    }

    startWorkers(first!, second!);
    await waitFor(
      async () =>
        (await deliveriesOf(recorder, [goneId, healthyId])).every((d) => d.status !== 'pending'),
      { what: 'no delivery left pending', timeoutMs: 20_000 },
    );
    const sentBeforeSettling = gone.requests.length;
    await stopWorkers(first!, second!);

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
    expect(
      await recorder.components.webhooksRepository.model.findById(goneId).lean(),
    ).toMatchObject({ enabled: false, disabledReason: 'gone' });

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
