import { Schema, type Connection, type Model } from 'mongoose';
import type { Kafka, Producer } from 'kafkajs';
import { createKafka, createProducer, ensureTopics } from './kafka';
import { connectMongo, syncIndexes } from './mongo';
import { newEvent, TOPICS, type ProjectDeletedEvent } from './events';
import {
  OutboxRelay,
  outboxEntry,
  outboxFields,
  withOutbox,
  type OutboxRelayOptions,
  type OutboxWriter,
} from './outbox';
import { collectMessages, testInfraUrls, testLogger, uniqueName, waitFor } from './testing';

type Collector = Awaited<ReturnType<typeof collectMessages>>;

interface Thing {
  name: string;
  deletedAt?: Date;
  outbox: unknown[];
  outboxPending: boolean;
}

describe('the outbox relay (real Mongo and Kafka)', () => {
  let connection: Connection;
  let kafka: Kafka;
  let Thing: Model<Thing>;

  beforeAll(async () => {
    const urls = testInfraUrls();
    connection = await connectMongo({
      url: urls.mongoUrl,
      dbName: uniqueName('shared_outbox'),
      logger: testLogger(),
    });
    const schema = new Schema<Thing>({ name: String, deletedAt: Date });
    schema.add(outboxFields);
    Thing = connection.model<Thing>('Thing', schema);
    await syncIndexes([Thing]);
    kafka = createKafka({
      ...urls.kafka,
      clientId: 'outbox-test',
      logger: testLogger(),
    });
    await ensureTopics(kafka);
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  /** A relay over `Thing` with the real broker, unless `options` say otherwise. */
  const newRelay = (options: Partial<OutboxRelayOptions> = {}) =>
    new OutboxRelay({
      producer: createProducer(kafka),
      models: [Thing],
      logger: testLogger(),
      ...options,
    });

  const deletedEvent = (projectId: string) =>
    newEvent<ProjectDeletedEvent>({ type: 'project.deleted', accountId: 'acct-outbox', projectId });

  it('publishes events written with a change, in order, and empties the outbox', async () => {
    await withRelay({}, async (relay, collector) => {
      const thing = await Thing.create({ name: 'a' });
      const id = thing._id.toHexString();
      const events = [deletedEvent(id), deletedEvent(id)];
      await Thing.updateOne(
        { _id: thing._id },
        withOutbox(
          { $set: { deletedAt: new Date() } },
          ...events.map((e) => outboxEntry(TOPICS.projectDeleted, id, e)),
        ),
      );
      const stored = await Thing.findById(thing._id).lean();
      expect(stored?.deletedAt).toBeInstanceOf(Date);
      expect(stored?.outbox).toHaveLength(2);

      relay.start();
      relay.notify(Thing, thing._id);
      const received = await collector.waitFor((m) => m.key === id, 2);
      expect(received.map((m) => m.value.eventId)).toEqual(events.map((e) => e.eventId));
      expect(received[0]!.value).toEqual(events[0]);
      await waitFor(
        async () => {
          const doc = await Thing.findById(thing._id).lean();
          return doc?.outbox.length === 0 && doc.outboxPending === false;
        },
        { what: 'the outbox to empty' },
      );
    });
  });

  /** A relay that never runs: what a writer that crashed right after its write leaves. */
  const crashedWriter = () => newRelay();

  /** Runs `body` with a relay (not yet started) and a collector of project.deleted; stops both. */
  async function withRelay(
    options: Partial<OutboxRelayOptions>,
    body: (relay: OutboxRelay, collector: Collector) => Promise<void>,
  ) {
    const collector = await collectMessages(kafka, [TOPICS.projectDeleted]);
    const relay = newRelay(options);
    try {
      await body(relay, collector);
    } finally {
      await relay.stop();
      await collector.stop();
    }
  }

  /** A document with one project.deleted event in its outbox, written through `writer`. */
  async function writePending(name: string, writer: OutboxWriter) {
    const thing = await Thing.create({ name });
    const id = thing._id.toHexString();
    const event = deletedEvent(id);
    await writer.write(Thing, thing._id, () =>
      Thing.updateOne(
        { _id: thing._id },
        withOutbox(
          { $set: { deletedAt: new Date() } },
          outboxEntry(TOPICS.projectDeleted, id, event),
        ),
      ),
    );
    return { _id: thing._id, id, event };
  }

  it('keeps events until the broker takes them', async () => {
    // A producer pointed at a port where no broker listens stands in for an outage.
    const down = createKafka({
      brokers: ['127.0.0.1:1'],
      clientId: 'outbox-down',
      logger: testLogger(),
    });
    const failing = newRelay({ producer: createProducer(down) });
    const written = await writePending('b', failing);
    await expect(failing.drainOnce()).rejects.toThrow();
    const kept = await Thing.findById(written._id).lean();
    expect(kept?.outbox).toHaveLength(1);
    expect(kept?.outboxPending).toBe(true);

    await withRelay({}, async (relay, collector) => {
      // Its sweep at start finds the document the failed relay left pending.
      relay.start();
      const [message] = await collector.waitFor((m) => m.key === written.id);
      expect(message!.value.eventId).toBe(written.event.eventId);
      await waitFor(
        async () => (await Thing.findById(written._id).lean())?.outboxPending === false,
        { what: 'the document to be acknowledged' },
      );
    });
  });

  it('publishes what its writers write at once, and leaves the rest to its periodic sweep', async () => {
    await withRelay({ sweepIntervalMs: 10 * 60_000 }, async (relay, collector) => {
      // Found by the sweep at start: after it, only its own writes or the next sweep (10 min).
      const before = await writePending('before-start', crashedWriter());
      relay.start();
      await collector.waitFor((m) => m.key === before.id);

      const unnamed = await writePending('crashed-writer', crashedWriter());
      const named = await writePending('own-writer', relay);
      const [message] = await collector.waitFor((m) => m.key === named.id);
      expect(message!.value).toEqual(named.event);
      await waitFor(async () => (await Thing.findById(named._id).lean())?.outboxPending === false, {
        what: 'the outbox to be acknowledged',
      });
      // The unnamed document was written before the named one and the relay read neither
      // otherwise: a later write through the relay is the sentinel that it did not go out.
      const sentinel = await writePending('sentinel', relay);
      await collector.waitFor((m) => m.key === sentinel.id);
      expect(collector.messages.filter((m) => m.key === unnamed.id)).toHaveLength(0);
      expect((await Thing.findById(unnamed._id).lean())?.outbox).toHaveLength(1);
      // Told again, it publishes nothing twice.
      relay.notify(Thing, named._id);
      relay.notify(Thing, unnamed._id);
      await collector.waitFor((m) => m.key === unnamed.id);
      const second = await writePending('second-sentinel', relay);
      await collector.waitFor((m) => m.key === second.id);
      expect(collector.messages.filter((m) => m.key === named.id)).toHaveLength(1);
    });
  });

  it('finds what a crashed writer left with its periodic sweep', async () => {
    await withRelay({ sweepIntervalMs: 300 }, async (relay, collector) => {
      relay.start();
      const written = await writePending('left-by-a-crashed-writer', crashedWriter());
      const [message] = await collector.waitFor((m) => m.key === written.id, 1, 10_000);
      expect(message!.value).toEqual(written.event);
    });
  });

  it('publishes every event of a document changed twice before it ran, in order, then empties it', async () => {
    await withRelay({ sweepIntervalMs: 10 * 60_000 }, async (relay, collector) => {
      const written = await writePending('busy', crashedWriter());
      // Another change of the same document while the first event is pending.
      const later = deletedEvent(written.id);
      await Thing.updateOne(
        { _id: written._id },
        withOutbox(
          { $set: { name: 'busy-2' } },
          outboxEntry(TOPICS.projectDeleted, written.id, later),
        ),
      );
      relay.start();
      const received = await collector.waitFor((m) => m.key === written.id, 2);
      expect(received.map((m) => m.value.eventId)).toEqual([written.event.eventId, later.eventId]);
      await waitFor(
        async () => {
          const doc = await Thing.findById(written._id).lean();
          return doc?.outbox.length === 0 && doc.outboxPending === false;
        },
        { what: 'the outbox to empty' },
      );
    });
  });

  it('publishes at once a document written again while its first events go out', async () => {
    const collector = await collectMessages(kafka, [TOPICS.projectDeleted]);
    // A producer whose sends wait for the test: the relay is caught mid-publish.
    const real = createProducer(kafka);
    let sendCalled!: () => void;
    const sending = new Promise<void>((resolve) => (sendCalled = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const gated = Object.create(real) as Producer;
    gated.send = async (record) => {
      sendCalled();
      await released;
      return real.send(record);
    };
    // No sweep during the test: only the writers' notifications can publish.
    const relay = newRelay({ producer: gated, sweepIntervalMs: 10 * 60_000 });
    try {
      relay.start();
      const first = await writePending('written-twice', relay);
      await sending;
      const second = deletedEvent(first.id);
      await relay.write(Thing, first._id, () =>
        Thing.updateOne(
          { _id: first._id },
          withOutbox(
            { $set: { name: 'written-twice-again' } },
            outboxEntry(TOPICS.projectDeleted, first.id, second),
          ),
        ),
      );
      release();
      const received = await collector.waitFor((m) => m.key === first.id, 2, 10_000);
      expect(received.map((m) => m.value.eventId)).toEqual([first.event.eventId, second.eventId]);
    } finally {
      release();
      await relay.stop();
      await collector.stop();
    }
  });
});
