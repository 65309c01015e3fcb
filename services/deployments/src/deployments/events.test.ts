import { TOPICS, deploymentStatusChangedEvent } from '@platform/shared';
import { collectMessages } from '@platform/shared/testing';
import { newCommitHash, useHarness } from '../test/harness';
import { useFixtureSteps } from '../test/processes';

const steps = useFixtureSteps();
const h = useHarness({
  relay: true,
  pipeline: {
    // A commit message starting with "slow" makes a long build, to cancel it midway.
    TEST_BUILD: `case "$COMMIT_MESSAGE" in slow*) ${steps.longStep} ;; *) echo built ;; esac`,
    TEST_DEPLOY: 'echo deployed',
  },
});
let collector: Awaited<ReturnType<typeof collectMessages>>;

beforeAll(async () => {
  collector = await collectMessages(h.kafka, [TOPICS.deploymentStatusChanged]);
}, 60_000);

afterAll(async () => {
  await collector?.stop();
});

// The waits below allow 45 s on a loaded machine, so each test gets 60 s (the default is 30 s).
const eventsOf = (deploymentId: string) =>
  collector.messages.filter((m) => m.value?.deploymentId === deploymentId);

/**
 * Waits until the collector has read everything published so far on `partition`: a later event
 * on it, the creation event of a new deployment (made until one lands there; keys spread over
 * the partitions). A message sent twice would have been read by then.
 */
async function readPast(partition: number) {
  const service = h.projects.addService();
  for (let tries = 0; tries < 40; tries++) {
    const sentinel = await h.api.trigger(service, { commitHash: newCommitHash() });
    const [first] = await collector.waitFor(
      (m) => m.value?.deploymentId === sentinel.body.id,
      1,
      45_000,
    );
    if (first!.partition === partition) return;
  }
  throw new Error(`no sentinel event landed on partition ${partition}`);
}

/**
 * The `count` events published of the deployment, once it can have published no more: its
 * outbox is empty and the collector has read past them (so a duplicate would be among them).
 */
async function publishedEvents(id: string, count: number) {
  const messages = await collector.waitFor((m) => m.value?.deploymentId === id, count, 45_000);
  await h.outboxDrained(id);
  await readPast(messages[0]!.partition);
  expect(eventsOf(id)).toHaveLength(count);
  return messages;
}

describe('deployment.status-changed events', () => {
  it('publishes one event per status change, in order, keyed by the deployment id', async () => {
    const service = h.projects.addService();
    const commitHash = newCommitHash();
    const created = await h.api.trigger(service, { commitHash });
    await h.waitForStatus(service, created.body.id, 'DEPLOYED');

    const messages = await publishedEvents(created.body.id, 3);

    expect(messages.map((m) => m.key)).toEqual([created.body.id, created.body.id, created.body.id]);
    expect(new Set(messages.map((m) => m.partition)).size).toBe(1);
    const events = messages.map((m) => deploymentStatusChangedEvent.strict().parse(m.value));
    expect(events.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'BUILDING'],
      ['BUILDING', 'DEPLOYING'],
      ['DEPLOYING', 'DEPLOYED'],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        type: 'deployment.status_changed',
        accountId: service.accountId,
        projectId: service.projectId,
        serviceId: service.serviceId,
        deploymentId: created.body.id,
        commitHash,
      });
    }
    expect(new Set(events.map((e) => e.eventId)).size).toBe(3);
    const doc = await h.document(created.body.id);
    expect(events[2]!.occurredAt).toBe(doc!.deployedAt!.toISOString());
  }, 60_000);

  it('publishes BUILDING then CANCELLED for a deployment cancelled during its build', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, {
      commitHash: newCommitHash(),
      commitMessage: 'slow build',
    });
    await steps.pidsOf(created.body.id);

    const cancelled = await h.api.cancel(service, created.body.id);
    expect(cancelled.status).toBe(200);
    const messages = await publishedEvents(created.body.id, 2);

    expect(messages.map((m) => [m.value.previousStatus, m.value.status])).toEqual([
      [null, 'BUILDING'],
      ['BUILDING', 'CANCELLED'],
    ]);
  }, 60_000);
});
