import { waitFor } from '@platform/shared/testing';
import { Types } from 'mongoose';
import { answerInTurn, type Receiver } from '../test/receiver';
import {
  buildStatusChange,
  settledDelivery,
  storeDelivery,
  subscribe,
  useTestBed,
  type TestService,
  type TestServiceOptions,
} from '../test/test-service';

// The worker's resilience: restarts, dead workers, slow receivers, long outages. Events are
// handed to the service the way its Kafka consumer hands them (deliveries.test.ts covers Kafka).
const bed = useTestBed();
const newDatabase = () => bed.newDatabase('webhooks_worker');

/** A project of its own with a webhook that posts to `target`. */
async function subscribed(service: TestService, target: Receiver) {
  const p = bed.project(service);
  return { ...p, webhookId: (await subscribe(p, `${target.url}/hook`)).id };
}

/**
 * A service on a database of its own, a receiver answering with `respond`, and a project with a
 * webhook posting to it.
 */
async function subscribedService(
  options: Partial<TestServiceOptions> = {},
  respond?: Parameters<typeof bed.receiver>[0],
) {
  const dbName = newDatabase();
  const target = await bed.receiver(respond);
  const service = await bed.start({ dbName, ...options });
  return { dbName, target, service, p: await subscribed(service, target) };
}

const deliveryOf = (service: TestService, eventId: string) =>
  service.models.deliveries.findOne({ eventId }).lean();

describe('restarts', () => {
  it('delivers after a restart a retry that was scheduled when the service stopped', async () => {
    const {
      dbName,
      target,
      service: first,
      p,
    } = await subscribedService({ retrySchedule: [1_500] }, answerInTurn(500, 200));
    const event = buildStatusChange(p);

    await first.deliveries.recordStatusChange(event);
    const scheduled = await waitFor(async () => {
      const delivery = await deliveryOf(first, event.eventId);
      return delivery?.attemptCount === 1 ? delivery : null;
    });
    await bed.stop(first);

    expect(scheduled).toMatchObject({ status: 'pending', lastStatusCode: 500, leaseOwner: null });
    expect(scheduled.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    expect(target.requests).toHaveLength(1);

    const second = await bed.start({ dbName, retrySchedule: [1_500] });
    const requests = await target.waitForRequests(2);
    expect(requests[1]!.headers['webhook-id']).toBe(event.eventId);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    expect(await settledDelivery(second, { eventId: event.eventId }, 'succeeded')).toMatchObject({
      attemptCount: 2,
      lastStatusCode: 200,
    });
  });

  it('hands an attempt in flight back when stopping, so the next instance sends it at once', async () => {
    const {
      dbName,
      target,
      service: first,
      p,
    } = await subscribedService({ timeoutMs: 10_000 }, (_req, index) =>
      index === 0 ? 'hang' : { status: 200 },
    );
    const event = buildStatusChange(p);

    await first.deliveries.recordStatusChange(event);
    await target.waitForRequests(1);
    await bed.stop(first);

    // Its worker waits until the state the first one left is read.
    const second = await bed.start({ dbName, timeoutMs: 10_000, worker: false });
    const released = await deliveryOf(second, event.eventId);
    expect(released?.attemptCount).toBe(0);
    second.worker.start();
    const delivered = await settledDelivery(second, { eventId: event.eventId }, 'succeeded');
    expect(target.requests).toHaveLength(2);
    expect(delivered).toMatchObject({ attemptCount: 1, lastStatusCode: 200 });
  });

  it('takes over a delivery whose worker died mid-attempt once its lease runs out', async () => {
    const { target, service, p } = await subscribedService();
    const event = buildStatusChange(p);
    // What a worker that claimed the delivery and then died leaves behind.
    const orphan = await storeDelivery(service, p, event, {
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
    expect(await settledDelivery(service, { _id: orphan.id }, 'succeeded')).toMatchObject({
      attemptCount: 1,
      leaseOwner: null,
      leaseUntil: null,
    });
  });
});

describe('finding work', () => {
  it('sends a due delivery that another replica recorded without telling this one', async () => {
    const { target, service, p } = await subscribedService();
    const event = buildStatusChange(p);

    const recordedElsewhere = await storeDelivery(service, p, event);

    const [request] = await target.waitForRequests(1);
    expect(request!.headers['webhook-id']).toBe(event.eventId);
    expect(
      await settledDelivery(service, { _id: recordedElsewhere.id }, 'succeeded'),
    ).toMatchObject({
      attemptCount: 1,
      lastStatusCode: 204,
      leaseOwner: null,
    });
  });

  it('records nothing new for an event read again while its delivery waits for a retry', async () => {
    const { target, service, p } = await subscribedService(
      { retrySchedule: [600] },
      answerInTurn(500, 200),
    );
    const event = buildStatusChange(p);
    await service.deliveries.recordStatusChange(event);
    await waitFor(async () => (await deliveryOf(service, event.eventId))?.attemptCount === 1);

    const recorded = await service.deliveries.recordStatusChange(event);

    expect(recorded).toBe(0);
    const delivered = await settledDelivery(service, { eventId: event.eventId }, 'succeeded');
    expect(await service.models.deliveries.countDocuments({ eventId: event.eventId })).toBe(1);
    expect(delivered).toMatchObject({ attemptCount: 2 });
    expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([
      event.eventId,
      event.eventId,
    ]);
  });
});

describe('housekeeping', () => {
  it('deletes finished deliveries past retention and keeps the rest', async () => {
    const service = await bed.start({
      dbName: newDatabase(),
      retentionMs: 60_000,
      housekeepingIntervalMs: 200,
    });
    const model = service.models.deliveries;
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
    const { target, service, p } = await subscribedService({}, () => ({
      status: 200,
      delayMs: 20,
    }));
    const events = Array.from({ length: 6 }, () => buildStatusChange(p));

    for (const event of events) await service.deliveries.recordStatusChange(event);
    const requests = await target.waitForRequests(6);

    expect(requests.map((r) => r.headers['webhook-id'])).toEqual(events.map((e) => e.eventId));
    expect(target.maxConcurrent).toBe(1);
  });

  it('starts a slow receiver’s next event beside a request it has not answered yet', async () => {
    const { target, service, p } = await subscribedService(
      { timeoutMs: 10_000, inOrderWindowMs: 300 },
      (_req, index) => (index === 0 ? 'hang' : { status: 200 }),
    );
    const events = [buildStatusChange(p), buildStatusChange(p), buildStatusChange(p)];

    // No send starts before its event is recorded, so the first started after this instant and
    // the second may start only a window (300 ms) after the first. Measured from the receiver's
    // arrivals instead, the first request's own way there (slow under load) would eat the window.
    const recordedAt = Date.now();
    for (const event of events) await service.deliveries.recordStatusChange(event);
    const requests = await target.waitForRequests(3, 5_000);

    expect(requests[1]!.receivedAt - recordedAt).toBeGreaterThanOrEqual(300);
    expect(target.maxConcurrent).toBeGreaterThanOrEqual(2);
    await waitFor(async () => {
      const delivered = await service.models.deliveries.countDocuments({
        status: 'succeeded',
      });
      return delivered === 2;
    });
  });

  it('keeps delivering to a healthy receiver while another never answers', async () => {
    const {
      target: dead,
      service,
      p,
    } = await subscribedService({ concurrency: 4, timeoutMs: 8_000 }, () => 'hang');
    const healthy = await bed.receiver();
    await p.api.post(p.base, { url: `${healthy.url}/hook` });
    const events = Array.from({ length: 6 }, () => buildStatusChange(p));

    const recordedAt = Date.now();
    for (const event of events) await service.deliveries.recordStatusChange(event);
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
    const { target, service, p } = await subscribedService(
      { disableAfterMs: 500, retrySchedule: [200, 200, 200, 200, 200, 200] },
      () => ({ status: 503 }),
    );
    const event = buildStatusChange(p);

    await service.deliveries.recordStatusChange(event);
    const model = service.models.webhooks;
    const disabled = await waitFor(async () => {
      const webhook = await model.findById(p.webhookId).lean();
      return webhook?.enabled === false ? webhook : null;
    });

    expect(disabled.disabledReason).toBe('failing');
    const delivery = await settledDelivery(service, { eventId: event.eventId }, 'failed');
    const attempts = delivery.attempts;
    // Stopped by the disabling, not by the end of its seven-step schedule.
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThan(7);
    expect(delivery).toMatchObject({ nextAttemptAt: null, leaseOwner: null });
    expect(attempts.at(-1)!.at.getTime() - disabled.failingSince!.getTime()).toBeGreaterThanOrEqual(
      500,
    );
    expect(target.requests).toHaveLength(delivery.attemptCount);
  });

  it('stops the other pending deliveries of a webhook that answers 410 Gone', async () => {
    const waiting = buildStatusChange({ accountId: 'x', projectId: 'y' });
    const { target, service, p } = await subscribedService({ retrySchedule: [60_000] }, (req) => ({
      status: req.headers['webhook-id'] === waiting.eventId ? 500 : 410,
    }));
    const first = buildStatusChange(p);
    Object.assign(first, { eventId: waiting.eventId });
    const gone = buildStatusChange(p);

    await service.deliveries.recordStatusChange(first);
    await waitFor(async () => (await deliveryOf(service, first.eventId))?.attemptCount === 1);
    await service.deliveries.recordStatusChange(gone);

    await settledDelivery(service, { eventId: gone.eventId }, 'failed');
    expect(await settledDelivery(service, { eventId: first.eventId }, 'failed')).toMatchObject({
      attemptCount: 1,
      nextAttemptAt: null,
    });
    expect(
      await service.models.deliveries.countDocuments({
        webhookId: p.webhookId,
        $or: [{ status: 'pending' }, { leaseOwner: { $ne: null } }],
      }),
    ).toBe(0);
    expect(await service.models.webhooks.findById(p.webhookId).lean()).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    expect(target.requests).toHaveLength(2);
  });

  it('ends the failing run at the first success', async () => {
    const { service, p } = await subscribedService(
      { retrySchedule: [600] },
      answerInTurn(500, 200),
    );
    const event = buildStatusChange(p);
    const model = service.models.webhooks;

    await service.deliveries.recordStatusChange(event);
    const failing = await waitFor(
      async () => (await model.findById(p.webhookId).lean())?.failingSince,
    );
    await settledDelivery(service, { eventId: event.eventId }, 'succeeded');

    expect(failing.getTime()).toBeLessThanOrEqual(Date.now());
    await waitFor(async () => (await model.findById(p.webhookId).lean())?.failingSince === null);
    expect(await model.findById(p.webhookId).lean()).toMatchObject({
      enabled: true,
      failingSince: null,
    });
  });
});
