import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TOPICS, deploymentStatusChangedEvent } from '@platform/shared';
import { collectMessages, waitFor } from '@platform/shared/testing';
import { startHarness, newCommitHash, testPipelineOptions, type Harness } from '../test/harness';
import { killQuietly, LONG_STEP, pidsWrittenBy } from '../test/processes';

let h: Harness;
let collector: Awaited<ReturnType<typeof collectMessages>>;
let pidDir: string;
const leftovers: number[] = [];

beforeAll(async () => {
  pidDir = await mkdtemp(path.join(tmpdir(), 'events-test-'));
  h = await startHarness({
    relay: true,
    pipeline: {
      // A commit message starting with "slow" makes a long build, to cancel it midway.
      buildCommand: `case "$COMMIT_MESSAGE" in slow*) ${LONG_STEP} ;; *) echo built ;; esac`,
      deployCommand: 'echo deployed',
      commandEnv: { ...testPipelineOptions().commandEnv, PID_DIR: pidDir },
    },
  });
  collector = await collectMessages(h.kafka, [TOPICS.deploymentStatusChanged]);
}, 60_000);

afterAll(async () => {
  killQuietly(leftovers);
  await collector?.stop();
  await h?.close();
  await rm(pidDir, { recursive: true, force: true });
});

// The waits below allow 45 s on a loaded machine, so each test gets 60 s (the default is 30 s).
const eventsOf = (deploymentId: string) =>
  collector.messages.filter((m) => m.value?.deploymentId === deploymentId);

/** Once its outbox is empty the relay has sent every event of the deployment it will send. */
async function outboxDrained(id: string) {
  await waitFor(
    async () => {
      const doc = await h.document(id);
      return doc !== null && doc.outbox.length === 0 && !doc.outboxPending;
    },
    { what: `the outbox of ${id} to drain` },
  );
}

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

describe('deployment.status-changed events', () => {
  it('publishes one event per status change, in order, keyed by the deployment id', async () => {
    const service = h.projects.addService();
    const commitHash = newCommitHash();
    const created = await h.api.trigger(service, { commitHash });
    await h.waitForStatus(service, created.body.id, 'DEPLOYED');

    const messages = await collector.waitFor(
      (m) => m.value?.deploymentId === created.body.id,
      3,
      45_000,
    );
    await outboxDrained(created.body.id);
    await readPast(messages[0]!.partition);

    expect(eventsOf(created.body.id)).toHaveLength(3);
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
    leftovers.push(...(await pidsWrittenBy(pidDir, created.body.id)));

    const cancelled = await h.api.cancel(service, created.body.id);
    expect(cancelled.status).toBe(200);
    const messages = await collector.waitFor(
      (m) => m.value?.deploymentId === created.body.id,
      2,
      45_000,
    );
    await outboxDrained(created.body.id);
    await readPast(messages[0]!.partition);

    expect(eventsOf(created.body.id)).toHaveLength(2);
    expect(messages.map((m) => [m.value.previousStatus, m.value.status])).toEqual([
      [null, 'BUILDING'],
      ['BUILDING', 'CANCELLED'],
    ]);
  }, 60_000);
});
