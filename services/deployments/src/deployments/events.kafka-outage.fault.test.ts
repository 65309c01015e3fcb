import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  TOPICS,
  startEventConsumer,
  type DeploymentStatusChangedEvent,
  type EventConsumer,
} from '@platform/shared';
import { INFRA_SCRIPT, testLogger, uniqueName, waitFor } from '@platform/shared/testing';
import { startHarness, type Harness } from '../test/harness';

// Stops the shared Kafka for a while (a fault test: scripts/test.sh runs these one at a time),
// kept to one short test, and Kafka is always started again.
const run = promisify(execFile);
const infra = (command: 'start' | 'stop') =>
  run('bash', [INFRA_SCRIPT, command, 'kafka'], { timeout: 120_000 });

let h: Harness;
let kafkaStopped = false;
let consumer: EventConsumer | undefined;

beforeAll(async () => {
  h = await startHarness({ relay: true, pipeline: {} });
}, 60_000);

afterAll(async () => {
  if (kafkaStopped) await infra('start');
  await consumer?.stop();
  await h?.close();
}, 150_000);

describe('status events while Kafka is down', () => {
  it('keeps them in the outbox and publishes all of them, in order, once Kafka is back', async () => {
    kafkaStopped = true;
    await infra('stop');

    // A real build and start of the fixture app, while the broker is gone.
    const { service, id } = await h.newDeployment();
    await h.waitForStatus(service, id, 'DEPLOYED');
    const pending = await h.pendingEvents(id);
    expect(pending.map((e) => e.status)).toEqual(['BUILDING', 'DEPLOYING', 'DEPLOYED']);

    await infra('start');
    kafkaStopped = false;

    // From the beginning of the topic: the relay may publish before any new consumer is reading.
    const received: DeploymentStatusChangedEvent[] = [];
    consumer = await startEventConsumer({
      kafka: h.kafka,
      groupId: uniqueName('deployments-outage-test'),
      topics: [TOPICS.deploymentStatusChanged],
      logger: testLogger(),
      fromBeginning: true,
      connection: h.connection,
      handle: async (event) => {
        if (event.type === 'deployment.status_changed' && event.deploymentId === id)
          received.push(event);
      },
    });
    // A wide margin: after the broker's restart, a new group's first join waits for its
    // coordinator to load (24 s was seen with the machine's two cores busy; 30 s was too tight).
    await waitFor(() => received.length >= 3, {
      timeoutMs: 120_000,
      what: 'the three status events',
    });

    expect(received.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'BUILDING'],
      ['BUILDING', 'DEPLOYING'],
      ['DEPLOYING', 'DEPLOYED'],
    ]);
    expect(received.map((e) => e.eventId)).toEqual(pending.map((e) => e.eventId));
    await h.outboxDrained(id);
  }, 300_000);
});
