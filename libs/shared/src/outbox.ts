import { Schema, type Model } from 'mongoose';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { PlatformEvent, Topic } from './events';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model, whatever its document type
type AnyModel = Model<any>;

/**
 * The transactional outbox without transactions: an event is pushed into the `outbox` array of
 * the very document whose change it announces, in the same single-document update, so the
 * change and its event are written atomically (FerretDB has no multi-document transactions).
 * The relay publishes pending entries in order, then removes them. A broker outage only delays
 * publishing; a crash between publish and removal re-publishes, which consumers absorb by
 * eventId.
 *
 * Concurrency: FerretDB 1.24 does not isolate concurrent updates of one document (one can undo
 * another). So an outbox must live in documents that nobody else updates once the event is in:
 * a deleted project or service, or an insert-only record such as a deployment's status
 * transition. Documents that keep changing must not carry an outbox.
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

/** Add to a schema whose documents announce their changes: `schema.add(outboxFields)`. */
export const outboxFields = {
  outbox: { type: [outboxEntrySchema], default: [] },
  /** Set with every push, cleared by the relay when the array is empty: an indexable flag. */
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

/** The part of OutboxRelay a writer needs: "document `id` of `model` has events: publish now". */
export interface OutboxNotifier {
  notify(model: AnyModel, id: unknown): void;
}

export interface OutboxRelayOptions {
  producer: Producer;
  /** The collections whose documents carry an outbox. */
  models: AnyModel[];
  logger: Logger;
  /**
   * How often to look for pending outboxes nobody told the relay about (a writer that crashed
   * between its write and notify(), another replica's leftovers). Also done at start.
   */
  scanIntervalMs?: number;
  /** Publishing order across documents found by a scan, e.g. `{ at: 1 }`. */
  sort?: Record<string, 1 | -1>;
  batchSize?: number;
}

const MAX_BACKOFF_MS = 5_000;
const DEFAULT_SCAN_INTERVAL_MS = 30_000;
/** Past this many unpublished notifications (a long broker outage) the next scan finds them. */
const MAX_NOTIFIED = 10_000;

interface PendingDocument {
  _id: unknown;
  outbox?: OutboxEntry[];
  outboxPending?: boolean;
}

/**
 * Publishes outbox entries. The fast path is notify(model, id): the writer names the document,
 * the relay reads it by `_id`, publishes and acknowledges by `_id` — lookups an index answers
 * on any collection size, also on FerretDB, which answers no other filter from an index. The
 * scan for `{ outboxPending: true }` is the safety net, run at start and every
 * `scanIntervalMs`. Notified documents stay queued, in order, until their events are out.
 */
export class OutboxRelay implements OutboxNotifier {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private producerConnected = false;
  private scanRequested = true;
  private backingOff = false;
  private readonly notified = new Map<string, { model: AnyModel; id: unknown }>();
  private readonly log: Logger;

  constructor(private readonly options: OutboxRelayOptions) {
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

  /** Call after a write that pushed to the outbox of document `id` of `model`. */
  notify(model: AnyModel, id: unknown): void {
    if (this.notified.size >= MAX_NOTIFIED) {
      this.notified.clear();
      this.scanRequested = true;
    } else {
      this.notified.set(`${model.modelName}:${String(id)}`, { model, id });
    }
    this.poke();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
    if (this.producerConnected) await this.options.producer.disconnect().catch(() => undefined);
  }

  /** Scans every model and publishes everything pending once; returns how many events went out. */
  async drainOnce(): Promise<number> {
    let published = 0;
    while (true) {
      const { events, full } = await this.scanOnce();
      published += events;
      if (!full) return published;
    }
  }

  /** One batch per model; `full` when a model had more than a batch pending. */
  private async scanOnce() {
    let events = 0;
    let full = false;
    const batchSize = this.options.batchSize ?? 100;
    for (const model of this.options.models) {
      const docs = await model
        .find({ outboxPending: true }, { outbox: 1 })
        .sort(this.options.sort ?? {})
        .limit(batchSize)
        .lean<PendingDocument[]>();
      for (const doc of docs) events += await this.publishDocument(model, doc);
      if (docs.length === batchSize) full = true;
    }
    return { events, full };
  }

  /** The notified documents, in the order they were notified; each leaves the queue once out. */
  private async publishNotified() {
    let events = 0;
    for (const [key, { model, id }] of this.notified) {
      const doc = await model
        .findById(id, { outbox: 1, outboxPending: 1 })
        .lean<PendingDocument | null>();
      if (doc?.outboxPending) events += await this.publishDocument(model, doc);
      this.notified.delete(key);
    }
    return events;
  }

  private async publishDocument(model: AnyModel, doc: PendingDocument) {
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
    }
    // By _id alone: the filter FerretDB answers from an index. Safe because nobody writes an
    // outbox document once its event is in (above).
    await model.updateOne({ _id: doc._id }, { $set: { outbox: [], outboxPending: false } });
    return entries.length;
  }

  private async ensureProducer() {
    if (this.producerConnected) return;
    await this.options.producer.connect();
    this.producerConnected = true;
  }

  private async run() {
    const scanIntervalMs = this.options.scanIntervalMs ?? DEFAULT_SCAN_INTERVAL_MS;
    let backoff = 0;
    let nextScanAt = 0;
    while (this.running) {
      let more = false;
      try {
        this.woken = false;
        if (this.scanRequested || Date.now() >= nextScanAt) {
          // Stays requested until a scan gets through (and while batches come back full).
          this.scanRequested = true;
          nextScanAt = Date.now() + scanIntervalMs;
          more = (await this.scanOnce()).full;
          this.scanRequested = more;
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
      await this.sleep(backoff || Math.max(0, nextScanAt - Date.now()));
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
