import { waitFor } from '@platform/shared/testing';
import { answerInTurn, type Receiver, type ReceivedRequest } from '../test/receiver';
import { verifyStandardWebhook } from '../test/signatures';
import {
  buildProjectDeleted,
  buildStatusChange,
  newId,
  settledDelivery,
  startEventPublisher,
  storeDelivery,
  subscribe,
  useTestBed,
  type TestProject,
  type TestService,
} from '../test/test-service';
import { USER_AGENT } from './signature';

// Real Kafka, MongoDB and receivers on 127.0.0.1; retries after 200 ms, 200 ms and 400 ms.
const bed = useTestBed();
let service: TestService;
let publisher: Awaited<ReturnType<typeof startEventPublisher>>;

beforeAll(async () => {
  publisher = await startEventPublisher();
  service = await bed.start({ dbName: bed.newDatabase('webhooks_deliveries'), timeoutMs: 1_000 });
});

afterAll(() => publisher?.stop());

const SUMMARY_KEYS = [
  'attempts',
  'createdAt',
  'eventId',
  'id',
  'lastStatusCode',
  'nextAttemptAt',
  'status',
  'type',
];

const subscribeTo = (p: TestProject, target: Receiver) => subscribe(p, `${target.url}/hook`);

/** A project of its own with a webhook posting to a new receiver that answers with `respond`. */
async function subscribed(respond?: Parameters<typeof bed.receiver>[0]) {
  const p = bed.project(service);
  const target = await bed.receiver(respond);
  return { p, target, webhook: await subscribeTo(p, target) };
}

/** Two projects, of two accounts, and one receiver for the webhooks of both. */
const twoProjects = async () => ({
  p: bed.project(service),
  q: bed.project(service),
  target: await bed.receiver(),
});

/** Whether the consumer has handled the event (it records each one it handled, by its id). */
const processed = (eventId: string) =>
  service.connection
    .collection('processed_events')
    .countDocuments({ _id: { $regex: `:${eventId}$` } } as never);

const deliveriesOf = (webhookId: string) => service.models.deliveries.find({ webhookId }).lean();

const byEventId = (requests: ReceivedRequest[], eventId: string) =>
  requests.filter((r) => r.headers['webhook-id'] === eventId);

async function deliveryDetail(p: TestProject, webhookId: string, deliveryId: string) {
  const res = await p.api.get(`${p.base}/${webhookId}/deliveries/${deliveryId}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the webhook's only delivery of `eventId` is in `status`, and returns it. */
const settled = (webhookId: string, eventId: string, status: string) =>
  settledDelivery(service, { webhookId, eventId }, status);

describe('delivering deployment status changes', () => {
  it('sends every status change of a deployment with a signature the Standard Webhooks algorithm verifies', async () => {
    const { p, target, webhook } = await subscribed();
    const deploymentId = newId();
    const events = [
      buildStatusChange(p, { deploymentId, status: 'BUILDING', previousStatus: null }),
      buildStatusChange(p, { deploymentId, status: 'DEPLOYING', previousStatus: 'BUILDING' }),
      buildStatusChange(p, { deploymentId, status: 'DEPLOYED', previousStatus: 'DEPLOYING' }),
    ];

    await publisher.publish(...events);
    const requests = await target.waitForRequests(3);

    for (const event of events) {
      const [request, ...more] = byEventId(requests, event.eventId);
      expect(more).toHaveLength(0);
      expect(request).toMatchObject({ method: 'POST', path: '/hook' });
      expect(request!.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
      });
      expect(verifyStandardWebhook(webhook.secret, request!)).toBe(true);
      expect(JSON.parse(request!.body)).toEqual({
        type: 'deployment.status_changed',
        timestamp: event.occurredAt,
        version: 1,
        data: {
          deploymentId,
          serviceId: event.serviceId,
          projectId: p.projectId,
          status: event.status,
          previousStatus: event.previousStatus,
          commitHash: event.commitHash,
        },
      });
    }
    await waitFor(async () =>
      (await deliveriesOf(webhook.id)).every((d) => d.status === 'succeeded'),
    );
    const log = await p.api.get(`${p.base}/${webhook.id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual(
      [...events].reverse().map((e) => e.eventId),
    );
    for (const delivery of log.body.deliveries) {
      expect(Object.keys(delivery).sort()).toEqual(SUMMARY_KEYS);
      expect(delivery).toMatchObject({
        type: 'deployment.status_changed',
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 204,
        nextAttemptAt: null,
      });
    }
  });

  it('retries a failing receiver and delivers on the third try with the same webhook-id and body', async () => {
    const { p, target, webhook } = await subscribed(answerInTurn(500, 503, 200));
    const event = buildStatusChange(p);

    await publisher.publish(event);
    const requests = await target.waitForRequests(3);

    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([
      event.eventId,
      event.eventId,
      event.eventId,
    ]);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const request of requests)
      expect(verifyStandardWebhook(webhook.secret, request)).toBe(true);
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(150);
    expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(150);
    const stored = await settled(webhook.id, event.eventId, 'succeeded');
    const detail = await deliveryDetail(p, webhook.id, stored._id.toHexString());
    expect(Object.keys(detail).sort()).toEqual([...SUMMARY_KEYS, 'attemptLog', 'payload'].sort());
    expect(detail).toMatchObject({
      eventId: event.eventId,
      status: 'succeeded',
      attempts: 3,
      lastStatusCode: 200,
      nextAttemptAt: null,
      payload: JSON.parse(requests[0]!.body),
    });
    expect(detail.attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([
      500, 503, 200,
    ]);
    for (const attempt of detail.attemptLog) {
      expect(Object.keys(attempt).sort()).toEqual([
        'at',
        'durationMs',
        'error',
        'responseExcerpt',
        'statusCode',
      ]);
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt.error).toBeNull();
    }
  });

  it('marks a delivery failed after the last retry and keeps a capped excerpt of each answer', async () => {
    const { p, target, webhook } = await subscribed(() => ({
      status: 500,
      body: 'e'.repeat(5_000),
    }));
    const event = buildStatusChange(p);

    await publisher.publish(event);
    const stored = await settled(webhook.id, event.eventId, 'failed');

    expect(target.requests).toHaveLength(4);
    const detail = await deliveryDetail(p, webhook.id, stored._id.toHexString());
    expect(detail).toMatchObject({
      status: 'failed',
      attempts: 4,
      lastStatusCode: 500,
      nextAttemptAt: null,
    });
    expect(detail.attemptLog).toHaveLength(4);
    for (const attempt of detail.attemptLog) expect(attempt.responseExcerpt).toBe('e'.repeat(1024));
    const stillEnabled = await p.api.get(`${p.base}/${webhook.id}`);
    expect(stillEnabled.body.enabled).toBe(true);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const p = bed.project(service);
    const elsewhere = await bed.receiver();
    const target = await bed.receiver(() => ({
      status: 307,
      headers: { location: `${elsewhere.url}/hook` },
    }));
    const webhook = await subscribeTo(p, target);
    const event = buildStatusChange(p);

    await publisher.publish(event);
    const stored = await settled(webhook.id, event.eventId, 'failed');

    expect(target.requests).toHaveLength(4);
    expect(elsewhere.requests).toHaveLength(0);
    expect(stored.attempts.map((a) => [a.statusCode, a.error])).toEqual(
      Array(4).fill([307, 'redirects are not followed']),
    );
  });

  it('gives up on an attempt that gets no answer within the time limit and retries it', async () => {
    const { p, webhook } = await subscribed((_req, index) =>
      index === 0 ? 'hang' : { status: 200 },
    );
    const event = buildStatusChange(p);

    await publisher.publish(event);
    const stored = await settled(webhook.id, event.eventId, 'succeeded');

    expect(stored.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [null, 'no answer within 1000 ms'],
      [200, null],
    ]);
    expect(stored.attempts[0]!.durationMs).toBeGreaterThanOrEqual(1_000);
  });

  it('disables the webhook on 410 Gone and sends it nothing more', async () => {
    const { p, target, webhook } = await subscribed(() => ({ status: 410 }));
    const healthy = await bed.receiver();
    const gone = buildStatusChange(p);

    await publisher.publish(gone);

    const stored = await settled(webhook.id, gone.eventId, 'failed');
    expect(stored).toMatchObject({ attemptCount: 1, lastStatusCode: 410, nextAttemptAt: null });
    const shown = await p.api.get(`${p.base}/${webhook.id}`);
    expect(shown.body.enabled).toBe(false);
    const disabled = await service.models.webhooks.findById(webhook.id).lean();
    expect(disabled?.disabledReason).toBe('gone');

    // A later event reaches the project's other webhook, but not the disabled one.
    await subscribeTo(p, healthy);
    const later = buildStatusChange(p);
    await publisher.publish(later);
    await healthy.waitForRequests(1);
    expect(byEventId(healthy.requests, later.eventId)).toHaveLength(1);
    expect((await deliveriesOf(webhook.id)).map((d) => d.eventId)).toEqual([gone.eventId]);

    const test = await p.api.post(`${p.base}/${webhook.id}/test`);
    const redeliver = await p.api.post(
      `${p.base}/${webhook.id}/deliveries/${stored._id.toHexString()}/redeliver`,
    );
    expect([test.status, test.body]).toEqual([
      409,
      { error: 'CONFLICT', message: 'The webhook is disabled: enable it first.' },
    ]);
    expect([redeliver.status, redeliver.body.error]).toEqual([409, 'CONFLICT']);
    expect(target.requests).toHaveLength(1);
  });
});

describe('test sends and redeliveries', () => {
  it('answers 202 to a test send and delivers a signed webhook.test event', async () => {
    const { p, target, webhook } = await subscribed();

    const res = await p.api.post(`${p.base}/${webhook.id}/test`);

    expect(res.status).toBe(202);
    expect(res.body).toBeNull();
    const [recorded] = await deliveriesOf(webhook.id);
    expect(recorded).toMatchObject({ type: 'webhook.test', manual: true });
    const [request] = await target.waitForRequests(1);
    expect(request!.headers['webhook-id']).toBe(recorded!.eventId);
    expect(verifyStandardWebhook(webhook.secret, request!)).toBe(true);
    const body = JSON.parse(request!.body);
    expect(body).toEqual({
      type: 'webhook.test',
      timestamp: body.timestamp,
      version: 1,
      data: { webhookId: webhook.id, projectId: p.projectId },
    });
    expect(Date.parse(body.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    await settled(webhook.id, recorded!.eventId, 'succeeded');
    const log = await p.api.get(`${p.base}/${webhook.id}/deliveries`);
    expect(log.body.deliveries).toEqual([
      {
        id: recorded!._id.toHexString(),
        eventId: recorded!.eventId,
        type: 'webhook.test',
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 204,
        nextAttemptAt: null,
        createdAt: recorded!.createdAt.toISOString(),
      },
    ]);
  });

  it('sends a test event only once, even when it fails', async () => {
    const { p, target, webhook } = await subscribed(() => ({ status: 500 }));

    expect((await p.api.post(`${p.base}/${webhook.id}/test`)).status).toBe(202);
    const [recorded] = await deliveriesOf(webhook.id);
    const stored = await settled(webhook.id, recorded!.eventId, 'failed');

    expect(stored.attemptCount).toBe(1);
    expect(target.requests).toHaveLength(1);
  });

  it('returns 400 VALIDATION_ERROR for a test send with a body', async () => {
    const { p, webhook } = await subscribed();

    const res = await p.api.post(`${p.base}/${webhook.id}/test`, {
      type: 'deployment.status_changed',
    });

    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'type', message: 'unknown field' }]);
    expect(await deliveriesOf(webhook.id)).toHaveLength(0);
  });

  it('redelivers a delivered event as a new attempt with the same webhook-id and body', async () => {
    const { p, target, webhook } = await subscribed();
    const event = buildStatusChange(p);
    await publisher.publish(event);
    const first = await settled(webhook.id, event.eventId, 'succeeded');
    const deliveryId = first._id.toHexString();

    const res = await p.api.post(`${p.base}/${webhook.id}/deliveries/${deliveryId}/redeliver`);

    expect([res.status, res.body]).toEqual([202, null]);
    const requests = await target.waitForRequests(2);
    expect(requests[1]!.headers['webhook-id']).toBe(event.eventId);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    expect(verifyStandardWebhook(webhook.secret, requests[1]!)).toBe(true);
    await waitFor(async () => (await deliveryDetail(p, webhook.id, deliveryId)).attempts === 2);
    const detail = await deliveryDetail(p, webhook.id, deliveryId);
    expect(detail).toMatchObject({ status: 'succeeded', attempts: 2, lastStatusCode: 204 });
    expect(detail.attemptLog).toHaveLength(2);
  });

  it('redelivers a failed delivery once, without a new retry schedule', async () => {
    const { p, target, webhook } = await subscribed(() => ({ status: 500 }));
    await p.api.post(`${p.base}/${webhook.id}/test`);
    const [test] = await deliveriesOf(webhook.id);
    await settled(webhook.id, test!.eventId, 'failed');

    const res = await p.api.post(
      `${p.base}/${webhook.id}/deliveries/${test!._id.toHexString()}/redeliver`,
    );

    expect([res.status, res.body]).toEqual([202, null]);
    await waitFor(async () => (await deliveriesOf(webhook.id))[0]?.attemptCount === 2);
    const stored = await settled(webhook.id, test!.eventId, 'failed');
    expect(stored.attemptCount).toBe(2);
    expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([
      test!.eventId,
      test!.eventId,
    ]);
  });

  it('keeps the newest 50 attempts in the log when a redelivery makes the 51st', async () => {
    const { p, webhook } = await subscribed();
    const event = buildStatusChange(p);
    const fifty = Array.from({ length: 50 }, (_, i) => ({
      at: new Date(Date.now() - (50 - i) * 1_000),
      statusCode: 500,
      durationMs: 3,
      responseExcerpt: `attempt ${i + 1}`,
      error: null,
    }));
    const stored = await storeDelivery(service, { ...p, webhookId: webhook.id }, event, {
      status: 'failed',
      nextAttemptAt: null,
      attemptCount: 50,
      attempts: fifty,
      lastStatusCode: 500,
    });

    const res = await p.api.post(`${p.base}/${webhook.id}/deliveries/${stored.id}/redeliver`);

    expect(res.status).toBe(202);
    await settled(webhook.id, event.eventId, 'succeeded');
    const detail = await deliveryDetail(p, webhook.id, stored.id);
    expect(detail).toMatchObject({ status: 'succeeded', attempts: 51, lastStatusCode: 204 });
    expect(detail.attemptLog).toHaveLength(50);
    expect(detail.attemptLog[0].responseExcerpt).toBe('attempt 2');
    expect(detail.attemptLog[48].responseExcerpt).toBe('attempt 50');
    expect(detail.attemptLog[49]).toMatchObject({ statusCode: 204, error: null });
  });

  it('returns 404 NOT_FOUND for a delivery of another webhook, an unknown or a malformed id', async () => {
    const p = bed.project(service);
    const target = await bed.receiver();
    const one = await subscribeTo(p, target);
    const other = await subscribeTo(p, target);
    await p.api.post(`${p.base}/${other.id}/test`);
    const otherDeliveryId = (await deliveriesOf(other.id))[0]!._id.toHexString();

    const answers = await Promise.all([
      p.api.get(`${p.base}/${one.id}/deliveries/${otherDeliveryId}`),
      p.api.post(`${p.base}/${one.id}/deliveries/${otherDeliveryId}/redeliver`),
      p.api.get(`${p.base}/${one.id}/deliveries/${newId()}`),
      p.api.get(`${p.base}/${one.id}/deliveries/nope`),
      p.api.get(`${p.base}/${newId()}/deliveries`),
    ]);

    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect(answers.slice(0, 4).map((r) => r.body)).toEqual(
      Array(4).fill({ error: 'NOT_FOUND', message: 'Delivery not found.' }),
    );
    expect(answers[4]!.body).toEqual({ error: 'NOT_FOUND', message: 'Webhook not found.' });
  });

  it('pages the delivery log newest first', async () => {
    const { p, webhook } = await subscribed();
    for (let i = 0; i < 3; i++) {
      expect((await p.api.post(`${p.base}/${webhook.id}/test`)).status).toBe(202);
    }
    const sent = (await deliveriesOf(webhook.id))
      .map((d) => d._id.toHexString())
      .sort((a, b) => a.localeCompare(b));

    const page1 = await p.api.get(`${p.base}/${webhook.id}/deliveries?limit=2`);
    const page2 = await p.api.get(
      `${p.base}/${webhook.id}/deliveries?limit=2&cursor=${page1.body.nextCursor}`,
    );

    expect(page1.body.deliveries.map((d: { id: string }) => d.id)).toEqual([sent[2], sent[1]]);
    expect(page2.body.deliveries.map((d: { id: string }) => d.id)).toEqual([sent[0]]);
    expect(page2.body.nextCursor).toBeUndefined();
  });
});

describe('consuming events', () => {
  it('records one delivery for an event read twice', async () => {
    const { p, target, webhook } = await subscribed();
    const deploymentId = newId();
    const twice = buildStatusChange(p, { deploymentId });
    const marker = buildStatusChange(p, {
      deploymentId,
      status: 'FAILED',
      previousStatus: 'BUILDING',
    });

    await publisher.publish(twice, twice, marker);
    await waitFor(() => byEventId(target.requests, marker.eventId).length === 1);
    // The same event handled again past the consumer's memory (say, a crash before it noted it).
    const recordedAgain = await service.deliveries.recordStatusChange(twice);

    expect(recordedAgain).toBe(0);
    expect(byEventId(target.requests, twice.eventId)).toHaveLength(1);
    expect((await deliveriesOf(webhook.id)).map((d) => d.eventId).sort()).toEqual(
      [twice.eventId, marker.eventId].sort(),
    );
  });

  it('delivers only to the enabled webhooks of the event’s project and account', async () => {
    const { p, q, target } = await twoProjects();
    const mine = await subscribeTo(p, target);
    const paused = await subscribeTo(p, target);
    const elsewhere = await subscribeTo(q, target);
    await p.api.patch(`${p.base}/${paused.id}`, { enabled: false });
    const forged = buildStatusChange(p, { accountId: q.accountId });
    const real = buildStatusChange(p);

    await publisher.publish(forged, real);
    await waitFor(() => byEventId(target.requests, real.eventId).length === 1);

    expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([real.eventId]);
    expect((await deliveriesOf(mine.id)).map((d) => d.eventId)).toEqual([real.eventId]);
    expect(await deliveriesOf(paused.id)).toHaveLength(0);
    expect(await deliveriesOf(elsewhere.id)).toHaveLength(0);
  });

  it('sends nothing for a status event the deployments service does not confirm', async () => {
    const { p, target, webhook } = await subscribed();
    const unknown = buildStatusChange({ accountId: p.accountId, projectId: p.projectId });
    const recorded = buildStatusChange(p, { status: 'DEPLOYED', previousStatus: 'DEPLOYING' });
    const otherCommit = { ...recorded, eventId: crypto.randomUUID(), commitHash: 'ffffffffff' };
    const otherEnd = {
      ...recorded,
      eventId: crypto.randomUUID(),
      status: 'FAILED' as const,
      previousStatus: 'DEPLOYING' as const,
    };
    const otherService = { ...recorded, eventId: crypto.randomUUID(), serviceId: newId() };
    const real = buildStatusChange(p);

    await publisher.publish(unknown, otherCommit, otherEnd, otherService, real);
    await settled(webhook.id, real.eventId, 'succeeded');
    // Handled (each event is recorded as processed once its handler has run), and sent nothing.
    for (const event of [unknown, otherCommit, otherEnd, otherService]) {
      await waitFor(async () => (await processed(event.eventId)) === 1, {
        what: `event ${event.eventId} to be handled`,
      });
    }

    const sent = new Set(target.requests.map((r) => r.headers['webhook-id']));
    for (const event of [unknown, otherCommit, otherEnd, otherService])
      expect(sent.has(event.eventId)).toBe(false);
    const recordedEvents = (await deliveriesOf(webhook.id)).map((d) => d.eventId);
    expect(recordedEvents).not.toContain(unknown.eventId);
    expect(recordedEvents).not.toContain(otherEnd.eventId);
  });

  it('deletes nothing for a project.deleted the projects service does not confirm', async () => {
    const { p: live, q: gone, target } = await twoProjects();
    const kept = await subscribeTo(live, target);
    const doomed = await subscribeTo(gone, target);
    bed.projects.removeProject(gone.projectId);

    await publisher.publish(buildProjectDeleted(live.accountId, live.projectId));
    // Deleted for another account (which never owned it): confirmed, scoped to nothing of live's.
    await publisher.publish(buildProjectDeleted(gone.accountId, live.projectId));
    await publisher.publish(buildProjectDeleted(gone.accountId, gone.projectId));
    await waitFor(async () => (await service.models.webhooks.findById(doomed.id).lean()) === null, {
      what: 'the deleted project’s webhook to go',
    });

    expect(await service.models.webhooks.findById(kept.id).lean()).not.toBeNull();
    expect((await live.api.get(`${live.base}/${kept.id}`)).status).toBe(200);
  });

  it('removes a deleted project’s webhooks and deliveries, and only those', async () => {
    const { p, q, target } = await twoProjects();
    const doomed = await subscribeTo(p, target);
    await subscribeTo(p, target);
    const kept = await subscribeTo(q, target);
    const event = buildStatusChange(p);
    await publisher.publish(event);
    await settled(doomed.id, event.eventId, 'succeeded');
    const { webhooks, deliveries } = service.models;

    const deleted = buildProjectDeleted(p.accountId, p.projectId);
    bed.projects.removeProject(p.projectId);
    await publisher.publish(deleted, { ...deleted, eventId: crypto.randomUUID() });

    await waitFor(
      async () =>
        (await webhooks.countDocuments({ projectId: p.projectId })) +
          (await deliveries.countDocuments({ projectId: p.projectId })) ===
        0,
      { what: 'the project’s webhooks and deliveries to go' },
    );
    expect(await webhooks.findById(kept.id).lean()).toMatchObject({
      projectId: q.projectId,
    });
  });
});
