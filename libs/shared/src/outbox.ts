import { Schema, type Model } from 'mongoose';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { PlatformEvent, Topic } from './events';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model, whatever its document type
type AnyModel = Model<any>;

/**
 * The transactional outbox on a single document: an event is pushed into the `outbox` array of
 * the very document whose change it announces, in the same update (`withOutbox`), so the change
 * and its event are written atomically without a multi-document transaction. The relay publishes
 * a document's pending entries in order, then pulls exactly those entries out again (entries
 * pushed meanwhile stay). A broker outage only delays publishing; a crash between publish and
 * pull publishes again, which consumers absorb by `eventId` (at-least-once).
 *
 * Finding pending documents: the writer tells the relay which document it wrote
 * (`OutboxWriter.write`), so an event leaves within milliseconds; a periodic sweep reads
 * `{outboxPending: true}` through its index for whatever a crashed writer, or another replica,
 * left behind.
 */
export interface OutboxEntry {
  eventId: string;
  topic: Topic;
  key: string;
  payload: PlatformEvent;
}

const outboxEntrySchema = new Schema<OutboxEntry>(
  {
    eventId: { type: String, required: true },
    topic: { type: String, required: true },
    key: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
  },
  { _id: false },
);

/** Add to a schema whose documents announce their changes: `...outboxFields` in its definition. */
export const outboxFields = {
  outbox: { type: [outboxEntrySchema], default: [] },
  /** Set with every push, cleared by the relay once the array is empty: the sweep's index. */
  outboxPending: { type: Boolean, default: false, index: true },
};

export function outboxEntry(topic: Topic, key: string, payload: PlatformEvent): OutboxEntry {
  return { eventId: payload.eventId, topic, key, payload };
}

/** Merges the outbox push into an update document: `withOutbox({ $set: {...} }, entry)`. */
export function withOutbox<U extends { $set?: Record<string, unknown> }>(
  update: U,
  ...entries: OutboxEntry[]
) {
  return {
    ...update,
    $set: { ...(update.$set ?? {}), outboxPending: true },
    $push: { outbox: { $each: entries } },
  };
}

/** What a repository that writes events needs from the relay. */
export interface OutboxWriter {
  /**
   * Runs `write`, a single-document write of `model`'s document `id` that may push events into
   * its outbox (or do nothing, e.g. a lost race), and has the relay publish them at once.
   */
  write<T>(model: AnyModel, id: unknown, write: () => Promise<T>): Promise<T>;
}

/** For code that publishes nothing in a given setting (a test without Kafka): just writes. */
export const writeWithoutRelay: OutboxWriter = { write: (_model, _id, write) => write() };

export interface OutboxRelayOptions {
  producer: Producer;
  /** The collections whose documents carry an outbox. */
  models: AnyModel[];
  logger: Logger;
  /** How often to sweep for pending documents nobody announced (a writer that crashed). */
  sweepIntervalMs?: number;
  batchSize?: number;
}

const MAX_BACKOFF_MS = 5_000;
const DEFAULT_SWEEP_INTERVAL_MS = 5_000;
/** Past this many unpublished notifications (a long broker outage) the sweep takes over. */
const MAX_NOTIFIED = 10_000;

interface PendingDocument {
  _id: unknown;
  outbox?: OutboxEntry[];
}

const keyOf = (model: AnyModel, id: unknown) => `${model.collection.collectionName}:${String(id)}`;

/**
 * Publishes outbox entries: at once for the documents writers name, in the order they name
 * them; the rest from the sweep at start and every `sweepIntervalMs`.
 */
export class OutboxRelay implements OutboxWriter {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private producerConnected = false;
  private sweepRequested = true;
  private backingOff = false;
  private readonly notified = new Map<string, { model: AnyModel; id: unknown }>();
  private readonly log: Logger;

  constructor(private readonly options: OutboxRelayOptions) {
    if (options.models.length === 0) throw new Error('OutboxRelay: no models');
    this.log = options.logger.child({ component: 'outbox' });
    options.producer.on(options.producer.events.DISCONNECT, () => {
      this.producerConnected = false;
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async write<T>(model: AnyModel, id: unknown, write: () => Promise<T>): Promise<T> {
    const result = await write();
    this.notify(model, id);
    return result;
  }

  /** Publishes document `id` of `model` now (write() calls it). */
  notify(model: AnyModel, id: unknown): void {
    if (this.notified.size >= MAX_NOTIFIED) {
      this.notified.clear();
      this.sweepRequested = true;
    } else {
      this.notified.set(keyOf(model, id), { model, id });
    }
    this.poke();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
    if (this.producerConnected) await this.options.producer.disconnect().catch(() => undefined);
  }

  /** Publishes every pending document now; returns how many events went out. */
  async drainOnce(): Promise<number> {
    let published = 0;
    while (true) {
      const { events, full } = await this.sweepOnce();
      published += events;
      if (!full) return published;
    }
  }

  /** One batch of pending documents of each model; `full` when more may remain. */
  private async sweepOnce() {
    const batchSize = this.options.batchSize ?? 100;
    let events = 0;
    let full = false;
    for (const model of this.options.models) {
      const pending = await model
        .find({ outboxPending: true }, { outbox: 1 })
        .limit(batchSize)
        .lean<PendingDocument[]>();
      for (const doc of pending) events += await this.publish(model, doc);
      full ||= pending.length === batchSize;
    }
    return { events, full };
  }

  /**
   * The notified documents, in the order they were notified. Each leaves the queue before it is
   * read, so a document written again while its first events go out is queued again (at the
   * end, and still visited by this loop) instead of being forgotten until the next sweep.
   */
  private async publishNotified() {
    let events = 0;
    for (const [key, notified] of this.notified) {
      this.notified.delete(key);
      try {
        const doc = await notified.model
          .findById(notified.id, { outbox: 1 })
          .lean<PendingDocument | null>();
        if (doc) events += await this.publish(notified.model, doc);
      } catch (err) {
        if (!this.notified.has(key)) this.notified.set(key, notified);
        throw err;
      }
    }
    return events;
  }

  /**
   * Publishes the document's entries, then takes exactly those out (one pushed meanwhile stays
   * and keeps the document pending); the flag goes only when the array is empty.
   */
  private async publish(model: AnyModel, doc: PendingDocument) {
    const entries = doc.outbox ?? [];
    if (entries.length > 0) {
      await this.ensureProducer();
      // Consecutive entries of one topic go in one send; order within the document is kept.
      for (let i = 0; i < entries.length;) {
        const topic = entries[i]!.topic;
        let j = i;
        while (j < entries.length && entries[j]!.topic === topic) j++;
        await this.options.producer.send({
          topic,
          acks: -1,
          messages: entries
            .slice(i, j)
            .map((e) => ({ key: e.key, value: JSON.stringify(e.payload) })),
        });
        i = j;
      }
      // Nothing pushed since the read (the outbox is still exactly what went out): one write
      // empties it. Otherwise pull the entries as read (whole values), keeping the newer ones.
      const emptied = await model.updateOne(
        { _id: doc._id, outbox: entries },
        { $set: { outbox: [], outboxPending: false } },
      );
      if (emptied.matchedCount === 1) return entries.length;
      await model.updateOne({ _id: doc._id }, { $pullAll: { outbox: entries } });
    }
    await model.updateOne(
      { _id: doc._id, outboxPending: true, outbox: { $size: 0 } },
      { $set: { outboxPending: false } },
    );
    return entries.length;
  }

  private async ensureProducer() {
    if (this.producerConnected) return;
    await this.options.producer.connect();
    this.producerConnected = true;
  }

  private async run() {
    const sweepIntervalMs = this.options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    let backoff = 0;
    let nextSweepAt = 0;
    while (this.running) {
      let more = false;
      try {
        this.woken = false;
        if (this.sweepRequested || Date.now() >= nextSweepAt) {
          // Stays requested until a sweep gets through (and while batches come back full).
          this.sweepRequested = true;
          nextSweepAt = Date.now() + sweepIntervalMs;
          more = (await this.sweepOnce()).full;
          this.sweepRequested = more;
        }
        await this.publishNotified();
        if (backoff > 0) this.log.info('outbox relay recovered');
        backoff = 0;
      } catch (err) {
        backoff = Math.min(MAX_BACKOFF_MS, Math.max(250, backoff * 2));
        this.producerConnected = false;
        this.log.warn({ err: (err as Error).message, retryInMs: backoff }, 'outbox publish failed');
      }
      if (!this.running) break;
      if (backoff === 0 && (more || this.notified.size > 0)) continue;
      this.backingOff = backoff > 0;
      await this.sleep(backoff || Math.max(0, nextSweepAt - Date.now()));
      this.backingOff = false;
    }
  }

  /** Waits `ms`, or less when poked; after a failure only stop() shortens the wait. */
  private sleep(ms: number) {
    if (this.woken && !this.backingOff) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private poke() {
    this.woken = true;
    if (!this.backingOff || !this.running) this.wake?.();
  }
}
