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

export interface OutboxRelayOptions {
  producer: Producer;
  /** The collections whose documents carry an outbox. */
  models: AnyModel[];
  logger: Logger;
  /** How often to look when nobody called notify(). */
  pollIntervalMs?: number;
  /** Publishing order across documents, e.g. `{ at: 1 }`; events within a document keep theirs. */
  sort?: Record<string, 1 | -1>;
  batchSize?: number;
}

const MAX_BACKOFF_MS = 5_000;

export class OutboxRelay {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private producerConnected = false;
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

  /** Call after a write that pushed to an outbox: publishes now instead of at the next poll. */
  notify(): void {
    this.woken = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.notify();
    await this.loop;
    if (this.producerConnected) await this.options.producer.disconnect().catch(() => undefined);
  }

  /** Publishes everything pending once; returns how many events went out. */
  async drainOnce(): Promise<number> {
    let published = 0;
    const batchSize = this.options.batchSize ?? 100;
    for (const model of this.options.models) {
      const docs = await model
        .find({ outboxPending: true }, { outbox: 1 })
        .sort(this.options.sort ?? {})
        .limit(batchSize)
        .lean<{ _id: unknown; outbox: OutboxEntry[] }[]>();
      for (const doc of docs) published += await this.publishDocument(model, doc);
    }
    return published;
  }

  private async publishDocument(model: AnyModel, doc: { _id: unknown; outbox: OutboxEntry[] }) {
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
    // By _id alone: the only filter FerretDB answers from an index (any other scans the whole
    // collection). Safe because nobody writes an outbox document once its event is in (above).
    await model.updateOne({ _id: doc._id }, { $set: { outbox: [], outboxPending: false } });
    return entries.length;
  }

  private async ensureProducer() {
    if (this.producerConnected) return;
    await this.options.producer.connect();
    this.producerConnected = true;
  }

  private async run() {
    let backoff = 0;
    while (this.running) {
      let published = 0;
      try {
        this.woken = false;
        published = await this.drainOnce();
        if (backoff > 0) this.log.info('outbox relay recovered');
        backoff = 0;
      } catch (err) {
        backoff = Math.min(MAX_BACKOFF_MS, Math.max(250, backoff * 2));
        this.producerConnected = false;
        this.log.warn({ err: (err as Error).message, retryInMs: backoff }, 'outbox publish failed');
      }
      if (!this.running) break;
      if (published > 0 && backoff === 0) continue;
      await this.sleep(backoff || (this.options.pollIntervalMs ?? 1_000));
    }
  }

  private sleep(ms: number) {
    if (this.woken && ms < MAX_BACKOFF_MS) return Promise.resolve();
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
}
