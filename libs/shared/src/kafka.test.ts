import type { Connection } from 'mongoose';
import type { Kafka, Producer } from 'kafkajs';
import { pino } from 'pino';
import { closeKafka, createKafka, createProducer, ensureTopics } from './kafka';
import { startEventConsumer, watchEvents } from './kafka-consumer';
import { mongoProcessedEvents } from './processed-events';
import { connectMongo } from './mongo';
import { newEvent, type PlatformEvent, type ProjectDeletedEvent } from './events';
import { testInfraUrls, testLogger, uniqueName, waitFor } from './testing';

describe('Kafka through kafkajs (real broker)', () => {
  const topic = uniqueName('test.shared');
  let kafka: Kafka;
  let producer: Producer;
  let connection: Connection;

  beforeAll(async () => {
    const urls = testInfraUrls();
    kafka = createKafka({
      ...urls.kafka,
      clientId: 'shared-test',
      logger: testLogger(),
    });
    await ensureTopics(kafka, [topic], 1);
    producer = createProducer(kafka);
    await producer.connect();
    connection = await connectMongo({
      url: urls.mongoUrl,
      dbName: uniqueName('shared_kafka'),
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await producer.disconnect();
    await connection.dropDatabase();
    await connection.close();
  });

  const projectDeleted = (projectId: string) =>
    newEvent<ProjectDeletedEvent>({ type: 'project.deleted', accountId: 'acct-1', projectId });

  /** A consumer of the test topic in a group of its own, from the topic's end. */
  const consume = (handle: (event: PlatformEvent) => Promise<void>) =>
    startEventConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [topic],
      logger: testLogger(),
      connection,
      fromBeginning: false,
      handle,
    });

  it('creates topics idempotently', async () => {
    await expect(ensureTopics(kafka, [topic], 1)).resolves.toBeUndefined();
    const admin = kafka.admin();
    await admin.connect();
    expect(await admin.listTopics()).toContain(topic);
    await admin.disconnect();
  });

  it('delivers produced events to a consumer group and handles a re-delivered event once', async () => {
    const handled: PlatformEvent[] = [];
    const consumer = await consume(async (event) => void handled.push(event));
    try {
      const first = projectDeleted('p1');
      const second = projectDeleted('p2');
      // After the duplicate on its partition (same key): once it is handled, so is the duplicate.
      const sentinel = projectDeleted('p1');
      await producer.send({
        topic,
        messages: [first, first, second, sentinel].map((e) => ({
          key: e.projectId,
          value: JSON.stringify(e),
        })),
      });
      await waitFor(
        () => [second, sentinel].every((e) => handled.some((h) => h.eventId === e.eventId)),
        { what: 'the second event and the sentinel handled' },
      );
      const ids = handled.map((e) => e.eventId);
      expect(ids.filter((id) => id === first.eventId)).toHaveLength(1);
      expect(ids.sort()).toEqual([first.eventId, second.eventId, sentinel.eventId].sort());
      expect(handled.find((e) => e.eventId === first.eventId)).toEqual(first);
    } finally {
      await consumer.stop();
    }
  });

  it('skips a malformed message without blocking the ones after it', async () => {
    const handled: string[] = [];
    const consumer = await consume(async (event) => void handled.push(event.eventId));
    try {
      const good = projectDeleted('p3');
      await producer.send({
        topic,
        messages: [
          { value: 'not json' },
          { value: JSON.stringify({ type: 'project.deleted' }) },
          { value: JSON.stringify(good) },
        ],
      });
      await waitFor(() => handled.includes(good.eventId), { what: 'the valid event' });
      expect(handled).toEqual([good.eventId]);
    } finally {
      await consumer.stop();
    }
  });

  it('remembers handled events across consumers of the same group (a restart)', async () => {
    const processed = mongoProcessedEvents(connection, 'restart');
    const event = projectDeleted('p4');
    await processed.add(event.eventId);
    expect(await processed.has(event.eventId)).toBe(true);
    expect(await processed.has(projectDeleted('p5').eventId)).toBe(false);
    await processed.prune(new Date(Date.now() + 1000));
    expect(await processed.has(event.eventId)).toBe(false);
  });

  it('lets every watcher see every event from the moment it joined, as replicas would', async () => {
    const seen: [string[], string[]] = [[], []];
    const watchers = await Promise.all(
      seen.map((into) =>
        watchEvents({
          kafka,
          groupPrefix: 'shared-test-watch',
          topics: [topic],
          logger: testLogger(),
          handle: (event) => void into.push(event.eventId),
        }),
      ),
    );
    try {
      const events = [projectDeleted('w1'), projectDeleted('w2')];
      await producer.send({
        topic,
        messages: events.map((e) => ({ key: e.projectId, value: JSON.stringify(e) })),
      });
      const ids = events.map((e) => e.eventId).sort();
      await waitFor(() => seen.every((into) => into.length >= 2), { what: 'both watchers' });
      expect(seen.map((into) => [...into].sort())).toEqual([ids, ids]);
    } finally {
      await Promise.all(watchers.map((w) => w.stop()));
    }
  });

  it('gives up on a consumer that does not join its group in time: a rejection of its own, never an unhandled one', async () => {
    const groupId = uniqueName('slow-join');
    // A member that heartbeats once a minute: another member's join waits for its next heartbeat.
    const sitting = kafka.consumer({ groupId, heartbeatInterval: 60_000, sessionTimeout: 120_000 });
    await sitting.connect();
    await sitting.subscribe({ topics: [topic] });
    const joined = new Promise((resolve) => sitting.on(sitting.events.GROUP_JOIN, resolve));
    await sitting.run({ eachMessage: async () => undefined });
    await joined;
    const admin = kafka.admin();
    await admin.connect();
    try {
      // Jest fails the test on an unhandled rejection: the old consumerReady's timer gave one.
      const starting = startEventConsumer({
        kafka,
        groupId,
        topics: [topic],
        logger: testLogger(),
        connection,
        fromBeginning: false,
        handle: async () => undefined,
        readyTimeoutMs: 2_000,
      });

      await expect(starting).rejects.toThrow(
        'the consumer did not join its group and fetch within 2000 ms',
      );
      await sitting.disconnect();
      // The consumer given up on is not left in the group: once its join ends, it leaves.
      await waitFor(
        async () => (await admin.describeGroups([groupId])).groups[0]?.state === 'Empty',
        { timeoutMs: 20_000, what: 'the group to have no member left' },
      );
    } finally {
      await sitting.disconnect();
      await admin.disconnect();
    }
  });

  describe('closeKafka', () => {
    /** A client of its own and the warnings its closer logs. */
    function client() {
      const warnings: { connections: number }[] = [];
      const logger = pino(
        { level: 'warn' },
        { write: (line: string) => warnings.push(JSON.parse(line)) },
      );
      return {
        kafka: createKafka({
          ...testInfraUrls().kafka,
          clientId: 'close-test',
          logger,
        }),
        logger,
        warnings,
      };
    }

    it('finds nothing to close after its users disconnected', async () => {
      const { kafka, logger, warnings } = client();
      const admin = kafka.admin();
      await admin.connect();
      await admin.listTopics();
      await admin.disconnect();

      closeKafka(kafka, logger);

      expect(warnings).toEqual([]);
    });

    it('closes, and says so, a connection its user never closed', async () => {
      const { kafka, logger, warnings } = client();
      const abandoned = kafka.admin();
      await abandoned.connect();
      await abandoned.listTopics();

      closeKafka(kafka, logger);
      closeKafka(kafka, logger);

      // The first call closed it; the second found nothing left.
      expect(warnings).toEqual([
        expect.objectContaining({ connections: 1, msg: 'closing Kafka connections left open' }),
      ]);
      await abandoned.disconnect().catch(() => undefined);
    });
  });
});
