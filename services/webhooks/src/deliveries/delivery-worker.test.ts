import type { DeploymentStatusChangedEvent } from '@platform/shared';
import { uniqueName, waitFor } from '@platform/shared/testing';
import { Types } from 'mongoose';
import { startProjectsStub, type ProjectsStub } from '../test/projects-stub';
import { answerInTurn, startReceiver, type Receiver } from '../test/receiver';
import {
  buildProject,
  buildStatusChange,
  dropDatabase,
  startTestService,
  type TestService,
  type TestServiceOptions,
} from '../test/test-service';

// The worker's resilience: restarts, dead workers, slow receivers, long outages. Events are
// handed to the service the way its Kafka consumer hands them (deliveries.test.ts covers Kafka).
let projects: ProjectsStub;
const receivers: Receiver[] = [];
const services: TestService[] = [];
const databases: string[] = [];

beforeAll(async () => {
  projects = await startProjectsStub();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop().catch(() => undefined)));
  await Promise.all(receivers.map((r) => r.close()));
  await projects.close();
  await Promise.all(databases.map(dropDatabase));
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

function newDatabase() {
  const dbName = uniqueName('webhooks_worker');
  databases.push(dbName);
  return dbName;
}

async function start(options: Partial<TestServiceOptions> & { dbName: string }) {
  const service = await startTestService({ projectsUrl: projects.url, ...options });
  services.push(service);
  return service;
}

async function stop(service: TestService) {
  services.splice(services.indexOf(service), 1);
  await service.stop();
}

async function subscribe(service: TestService, target: Receiver) {
  const p = buildProject(service.url, projects);
  const res = await p.api.post(p.base, { url: `${target.url}/hook` });
  expect(res.status).toBe(201);
  return { ...p, webhookId: res.body.id as string };
}

const statusChange = (
  p: { accountId: string; projectId: string },
  fields: Partial<DeploymentStatusChangedEvent> = {},
) => buildStatusChange({ accountId: p.accountId, projectId: p.projectId, ...fields });

const deliveryOf = (service: TestService, eventId: string) =>
  service.components.deliveriesRepository.model.findOne({ eventId }).lean();

describe('restarts', () => {
  it('delivers after a restart a retry that was scheduled when the service stopped', async () => {
    const dbName = newDatabase();
    const target = await receiver(answerInTurn(500, 200));
    const first = await start({ dbName, retrySchedule: [1_500] });
    const p = await subscribe(first, target);
    const event = statusChange(p);

    await first.components.deliveries.recordStatusChange(event);
    const scheduled = await waitFor(async () => {
      const delivery = await deliveryOf(first, event.eventId);
      return delivery?.attemptCount === 1 ? delivery : null;
    });
    await stop(first);

    expect(scheduled).toMatchObject({ status: 'pending', lastStatusCode: 500, leaseOwner: null });
    expect(scheduled.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    expect(target.requests).toHaveLength(1);

    const second = await start({ dbName, retrySchedule: [1_500] });
    const requests = await target.waitForRequests(2);
    expect(requests[1]!.headers['webhook-id']).toBe(event.eventId);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    await waitFor(async () => (await deliveryOf(second, event.eventId))?.status === 'succeeded');
    expect(await deliveryOf(second, event.eventId)).toMatchObject({
      attemptCount: 2,
      lastStatusCode: 200,
    });
  });

  it('hands an attempt in flight back when stopping, so the next instance sends it at once', async () => {
    const dbName = newDatabase();
    const target = await receiver((_req, index) => (index === 0 ? 'hang' : { status: 200 }));
    const first = await start({ dbName, timeoutMs: 10_000 });
    const p = await subscribe(first, target);
    const event = statusChange(p);

    await first.components.deliveries.recordStatusChange(event);
    await target.waitForRequests(1);
    await stop(first);

    const second = await start({ dbName, timeoutMs: 10_000 });
    const released = await deliveryOf(second, event.eventId);
    expect(released?.attemptCount).toBe(0);
    await waitFor(async () => (await deliveryOf(second, event.eventId))?.status === 'succeeded');
    expect(target.requests).toHaveLength(2);
    expect(await deliveryOf(second, event.eventId)).toMatchObject({
      attemptCount: 1,
      lastStatusCode: 200,
    });
  });

  it('takes over a delivery whose worker died mid-attempt once its lease runs out', async () => {
    const dbName = newDatabase();
    const target = await receiver();
    const service = await start({ dbName });
    const p = await subscribe(service, target);
    const event = statusChange(p);
    const { model } = service.components.deliveriesRepository;
    // What a worker that claimed the delivery and then died leaves behind.
    const orphan = await model.create({
      webhookId: p.webhookId,
      projectId: p.projectId,
      eventId: event.eventId,
      type: event.type,
      body: '{"type":"deployment.status_changed"}',
      nextAttemptAt: new Date(),
      leaseOwner: 'dead-worker',
      leaseUntil: new Date(Date.now() + 400),
    });

    const busy = await p.api.post(`${p.base}/${p.webhookId}/deliveries/${orphan.id}/redeliver`);
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual({
      error: 'CONFLICT',
      message: 'An attempt of this delivery is in progress: try again when it is over.',
    });

    const [request] = await target.waitForRequests(1);
    expect(request!.receivedAt).toBeGreaterThanOrEqual(orphan.createdAt.getTime() + 300);
    await waitFor(async () => (await model.findById(orphan.id).lean())?.status === 'succeeded');
    expect(await model.findById(orphan.id).lean()).toMatchObject({
      attemptCount: 1,
      leaseOwner: null,
      leaseUntil: null,
    });
  });
});

describe('finding work', () => {
  it('sends a due delivery that another replica recorded without telling this one', async () => {
    const dbName = newDatabase();
    const target = await receiver();
    const service = await start({ dbName });
    const p = await subscribe(service, target);
    const event = statusChange(p);
    const { model } = service.components.deliveriesRepository;

    const recordedElsewhere = await model.create({
      webhookId: p.webhookId,
      projectId: p.projectId,
      eventId: event.eventId,
      type: event.type,
      body: '{"type":"deployment.status_changed"}',
      nextAttemptAt: new Date(),
    });

    const [request] = await target.waitForRequests(1);
    expect(request!.headers['webhook-id']).toBe(event.eventId);
    await waitFor(
      async () => (await model.findById(recordedElsewhere.id).lean())?.status === 'succeeded',
    );
    expect(await model.findById(recordedElsewhere.id).lean()).toMatchObject({
      attemptCount: 1,
      lastStatusCode: 204,
      leaseOwner: null,
    });
  });

  it('records nothing new for an event read again while its delivery waits for a retry', async () => {
    const dbName = newDatabase();
    const target = await receiver(answerInTurn(500, 200));
    const service = await start({ dbName, retrySchedule: [600] });
    const p = await subscribe(service, target);
    const event = statusChange(p);
    const { model } = service.components.deliveriesRepository;
    await service.components.deliveries.recordStatusChange(event);
    await waitFor(async () => (await deliveryOf(service, event.eventId))?.attemptCount === 1);

    const recorded = await service.components.deliveries.recordStatusChange(event);

    expect(recorded).toBe(0);
    await waitFor(async () => (await deliveryOf(service, event.eventId))?.status === 'succeeded');
    expect(await model.countDocuments({ eventId: event.eventId })).toBe(1);
    expect(await deliveryOf(service, event.eventId)).toMatchObject({ attemptCount: 2 });
    expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([
      event.eventId,
      event.eventId,
    ]);
  });
});

describe('housekeeping', () => {
  it('deletes finished deliveries past retention and keeps the rest', async () => {
    const dbName = newDatabase();
    const service = await start({ dbName, retentionMs: 60_000, housekeepingIntervalMs: 200 });
    const { model } = service.components.deliveriesRepository;
    const old = new Date(Date.now() - 120_000);
    const base = {
      webhookId: new Types.ObjectId(),
      projectId: 'p',
      type: 'webhook.test',
      body: '{}',
      attemptCount: 1,
    };
    // Written without mongoose so that the timestamps can lie in the past.
    const { insertedIds } = await model.collection.insertMany([
      { ...base, eventId: 'old-succeeded', status: 'succeeded', createdAt: old, updatedAt: old },
      { ...base, eventId: 'old-failed', status: 'failed', createdAt: old, updatedAt: old },
      {
        ...base,
        eventId: 'recent',
        status: 'succeeded',
        createdAt: new Date(),
        updatedAt: new Date(),
      },
    ]);

    await waitFor(async () => (await model.countDocuments({ eventId: /^old-/ })) === 0, {
      what: 'old deliveries to go',
    });
    expect(await model.findById(insertedIds[2]).lean()).toMatchObject({ eventId: 'recent' });
  });
});

describe('order and slow receivers', () => {
  it('sends a webhook’s events one at a time, in the order they happened', async () => {
    const dbName = newDatabase();
    const target = await receiver(() => ({ status: 200, delayMs: 20 }));
    const service = await start({ dbName });
    const p = await subscribe(service, target);
    const events = Array.from({ length: 6 }, () => statusChange(p));

    for (const event of events) await service.components.deliveries.recordStatusChange(event);
    const requests = await target.waitForRequests(6);

    expect(requests.map((r) => r.headers['webhook-id'])).toEqual(events.map((e) => e.eventId));
    expect(target.maxConcurrent).toBe(1);
  });

  it('starts a slow receiver’s next event beside a request it has not answered yet', async () => {
    const dbName = newDatabase();
    const target = await receiver((_req, index) => (index === 0 ? 'hang' : { status: 200 }));
    const service = await start({ dbName, timeoutMs: 10_000, inOrderWindowMs: 300 });
    const p = await subscribe(service, target);
    const events = [statusChange(p), statusChange(p), statusChange(p)];

    for (const event of events) await service.components.deliveries.recordStatusChange(event);
    const requests = await target.waitForRequests(3, 5_000);

    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(250);
    expect(target.maxConcurrent).toBeGreaterThanOrEqual(2);
    await waitFor(async () => {
      const delivered = await service.components.deliveriesRepository.model.countDocuments({
        status: 'succeeded',
      });
      return delivered === 2;
    });
  });

  it('keeps delivering to a healthy receiver while another never answers', async () => {
    const dbName = newDatabase();
    const service = await start({ dbName, concurrency: 4, timeoutMs: 8_000 });
    const dead = await receiver(() => 'hang');
    const healthy = await receiver();
    const p = await subscribe(service, dead);
    await p.api.post(p.base, { url: `${healthy.url}/hook` });
    const events = Array.from({ length: 6 }, () => statusChange(p));

    const recordedAt = Date.now();
    for (const event of events) await service.components.deliveries.recordStatusChange(event);
    const requests = await healthy.waitForRequests(6, 3_000);

    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(
      new Set(events.map((e) => e.eventId)),
    );
    expect(Math.max(...requests.map((r) => r.receivedAt)) - recordedAt).toBeLessThan(3_000);
    // The dead receiver holds at most its share of the four slots (one), not all of them.
    expect(dead.requests).toHaveLength(1);
  });
});

describe('long outages', () => {
  it('disables a webhook whose every attempt has failed for the disable period', async () => {
    const dbName = newDatabase();
    const target = await receiver(() => ({ status: 503 }));
    const service = await start({
      dbName,
      disableAfterMs: 500,
      retrySchedule: [200, 200, 200, 200, 200, 200],
    });
    const p = await subscribe(service, target);
    const event = statusChange(p);

    await service.components.deliveries.recordStatusChange(event);
    const { model } = service.components.webhooksRepository;
    const disabled = await waitFor(async () => {
      const webhook = await model.findById(p.webhookId).lean();
      return webhook?.enabled === false ? webhook : null;
    });

    expect(disabled.disabledReason).toBe('failing');
    await waitFor(async () => (await deliveryOf(service, event.eventId))?.status === 'failed');
    const delivery = await deliveryOf(service, event.eventId);
    const attempts = delivery!.attempts;
    // Stopped by the disabling, not by the end of its seven-step schedule.
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThan(7);
    expect(delivery).toMatchObject({ nextAttemptAt: null, leaseOwner: null });
    expect(attempts.at(-1)!.at.getTime() - disabled.failingSince!.getTime()).toBeGreaterThanOrEqual(
      500,
    );
    expect(target.requests).toHaveLength(delivery!.attemptCount);
  });

  it('stops the other pending deliveries of a webhook that answers 410 Gone', async () => {
    const dbName = newDatabase();
    const waiting = statusChange({ accountId: 'x', projectId: 'y' });
    const target = await receiver((req) => ({
      status: req.headers['webhook-id'] === waiting.eventId ? 500 : 410,
    }));
    const service = await start({ dbName, retrySchedule: [60_000] });
    const p = await subscribe(service, target);
    const first = statusChange(p);
    Object.assign(first, { eventId: waiting.eventId });
    const gone = statusChange(p);

    await service.components.deliveries.recordStatusChange(first);
    await waitFor(async () => (await deliveryOf(service, first.eventId))?.attemptCount === 1);
    await service.components.deliveries.recordStatusChange(gone);

    await waitFor(async () => (await deliveryOf(service, gone.eventId))?.status === 'failed');
    await waitFor(async () => (await deliveryOf(service, first.eventId))?.status === 'failed');
    expect(await deliveryOf(service, first.eventId)).toMatchObject({
      attemptCount: 1,
      nextAttemptAt: null,
    });
    expect(
      await service.components.deliveriesRepository.model.countDocuments({
        webhookId: p.webhookId,
        $or: [{ status: 'pending' }, { leaseOwner: { $ne: null } }],
      }),
    ).toBe(0);
    expect(
      await service.components.webhooksRepository.model.findById(p.webhookId).lean(),
    ).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    expect(target.requests).toHaveLength(2);
  });

  it('ends the failing run at the first success', async () => {
    const dbName = newDatabase();
    const target = await receiver(answerInTurn(500, 200));
    const service = await start({ dbName, retrySchedule: [600] });
    const p = await subscribe(service, target);
    const event = statusChange(p);
    const { model } = service.components.webhooksRepository;

    await service.components.deliveries.recordStatusChange(event);
    const failing = await waitFor(
      async () => (await model.findById(p.webhookId).lean())?.failingSince,
    );
    await waitFor(async () => (await deliveryOf(service, event.eventId))?.status === 'succeeded');

    expect(failing.getTime()).toBeLessThanOrEqual(Date.now());
    await waitFor(async () => (await model.findById(p.webhookId).lean())?.failingSince === null);
    expect(await model.findById(p.webhookId).lean()).toMatchObject({
      enabled: true,
      failingSince: null,
    });
  });
});
