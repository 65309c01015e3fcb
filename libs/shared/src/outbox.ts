import { Schema, type Connection, type Model } from 'mongoose';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { PlatformEvent, Topic } from './events';
import { isDuplicateKeyError } from './mongo';

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
 * Finding the pending documents: before the write, a marker naming the document goes into the
 * small `outbox_markers` collection; after it, the writer tells the relay (`OutboxWriter.write`
 * does both). The relay reads the document by `_id`, publishes, clears it by `_id` and deletes
 * the marker. Its periodic scan reads only the markers, so what it costs follows the events not
 * yet published, not the size of the collections (on FerretDB, which answers no filter but `_id`
 * from an index, a scan for `{outboxPending: true}` reads every document ever written). A writer
 * that crashed after its write leaves a marker the scan finds; one that crashed before leaves a
 * marker without a pending document, which the scan drops.
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

/** One per document that may hold unpublished events; `_id` is `<collection>:<document _id>`. */
interface OutboxMarker {
  _id: string;
  collectionName: string;
  documentId: unknown;
  at: Date;
}

const outboxMarkerSchema = new Schema<OutboxMarker>(
  {
    _id: { type: String, required: true },
    collectionName: { type: String, required: true },
    documentId: { type: Schema.Types.Mixed, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'outbox_markers' },
);

const outboxMarkers = (connection: Connection): Model<OutboxMarker> =>
  connection.models.OutboxMarker ??
  connection.model<OutboxMarker>('OutboxMarker', outboxMarkerSchema);

const markerId = (model: AnyModel, id: unknown) =>
  `${model.collection.collectionName}:${String(id)}`;

/** What a repository that writes events needs from the relay. */
export interface OutboxWriter {
  /**
   * Runs `write`, a single-document insert or update of `model`'s document `id` that pushes
   * events into its outbox (or does nothing, e.g. a lost race), with the marker before it and
   * the relay told after it.
   */
  write<T>(model: AnyModel, id: unknown, write: () => Promise<T>): Promise<T>;
}

/** For code that writes no events in a given setting (a test without Kafka): just writes. */
export const writeWithoutRelay: OutboxWriter = { write: (_model, _id, write) => write() };

export interface OutboxRelayOptions {
  producer: Producer;
  /** The collections whose documents carry an outbox (all in one database). */
  models: AnyModel[];
  logger: Logger;
  /** How often to read the markers for events nobody announced (a writer that crashed). */
  scanIntervalMs?: number;
  /** Markers younger than this are left to their writer's own notification. */
  scanMinAgeMs?: number;
  /** A marker whose document never came (its writer stopped in between) is dropped after this. */
  orphanMarkerMs?: number;
  batchSize?: number;
}

const MAX_BACKOFF_MS = 5_000;
const DEFAULT_SCAN_INTERVAL_MS = 5_000;
const DEFAULT_SCAN_MIN_AGE_MS = 5_000;
const DEFAULT_ORPHAN_MARKER_MS = 60_000;
/** Past this many unpublished notifications (a long broker outage) the markers take over. */
const MAX_NOTIFIED = 10_000;

interface PendingDocument {
  _id: unknown;
  outbox?: OutboxEntry[];
  outboxPending?: boolean;
}

/**
 * Publishes outbox entries: at once for the documents writers name, in the order they name
 * them; the rest (a writer that crashed, another replica's leftovers) from the markers at start
 * and every `scanIntervalMs`. Every read and write here is by `_id`.
 */
export class OutboxRelay implements OutboxWriter {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private producerConnected = false;
  private scanRequested = true;
  private backingOff = false;
  private readonly notified = new Map<string, { model: AnyModel; id: unknown }>();
  private readonly markers: Model<OutboxMarker>;
  private readonly byCollection: Map<string, AnyModel>;
  private readonly log: Logger;

  constructor(private readonly options: OutboxRelayOptions) {
    const [first] = options.models;
    if (!first) throw new Error('OutboxRelay: no models');
    this.markers = outboxMarkers(first.db);
    this.byCollection = new Map(options.models.map((m) => [m.collection.collectionName, m]));
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
    await this.markers
      .create({
        _id: markerId(model, id),
        collectionName: model.collection.collectionName,
        documentId: id,
        at: new Date(),
      })
      .catch((err: unknown) => {
        // Marked already (a retried write): one marker is enough.
        if (!isDuplicateKeyError(err)) throw err;
      });
    const result = await write();
    this.notify(model, id);
    return result;
  }

  /** Publishes document `id` of `model` now (write() calls it; its marker is there already). */
  notify(model: AnyModel, id: unknown): void {
    if (this.notified.size >= MAX_NOTIFIED) {
      this.notified.clear();
      this.scanRequested = true;
    } else {
      this.notified.set(markerId(model, id), { model, id });
    }
    this.poke();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
    if (this.producerConnected) await this.options.producer.disconnect().catch(() => undefined);
  }

  /** Publishes everything marked, however young; returns how many events went out. */
  async drainOnce(): Promise<number> {
    let published = 0;
    while (true) {
      const { events, full } = await this.scanOnce(0);
      published += events;
      if (!full) return published;
    }
  }

  /** One batch of markers older than `minAgeMs`, oldest first; `full` when more may remain. */
  private async scanOnce(minAgeMs: number) {
    const batchSize = this.options.batchSize ?? 100;
    const markers = await this.markers
      .find({ at: { $lte: new Date(Date.now() - minAgeMs) } })
      .sort({ at: 1 })
      .limit(batchSize)
      .lean<OutboxMarker[]>();
    let events = 0;
    for (const marker of markers) {
      const model = this.byCollection.get(marker.collectionName);
      if (!model) continue;
      const orphanAfter =
        marker.at.getTime() + (this.options.orphanMarkerMs ?? DEFAULT_ORPHAN_MARKER_MS);
      events += await this.publish(model, marker.documentId, Date.now() > orphanAfter);
    }
    return { events, full: markers.length === batchSize };
  }

  /** The notified documents, in the order they were notified; each leaves the queue once out. */
  private async publishNotified() {
    let events = 0;
    for (const [key, { model, id }] of this.notified) {
      events += await this.publish(model, id, true);
      this.notified.delete(key);
    }
    return events;
  }

  /**
   * Publishes the document's pending events, clears its outbox and drops its marker. A document
   * with nothing pending drops its marker; a missing one only when `dropIfMissing` (its writer
   * is done, or long gone).
   */
  private async publish(model: AnyModel, id: unknown, dropIfMissing: boolean) {
    const doc = await model
      .findById(id, { outbox: 1, outboxPending: 1 })
      .lean<PendingDocument | null>();
    if (!doc && !dropIfMissing) return 0;
    const entries = doc?.outboxPending ? (doc.outbox ?? []) : [];
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
    // By _id alone. Safe because nobody writes an outbox document once its event is in (above).
    // Both at once: should either fail, the events go out again, and consumers skip them by id.
    await Promise.all([
      doc?.outboxPending
        ? model.updateOne({ _id: doc._id }, { $set: { outbox: [], outboxPending: false } })
        : undefined,
      this.markers.deleteOne({ _id: markerId(model, id) }),
    ]);
    return entries.length;
  }

  private async ensureProducer() {
    if (this.producerConnected) return;
    await this.options.producer.connect();
    this.producerConnected = true;
  }

  private async run() {
    const scanIntervalMs = this.options.scanIntervalMs ?? DEFAULT_SCAN_INTERVAL_MS;
    const minAgeMs = this.options.scanMinAgeMs ?? DEFAULT_SCAN_MIN_AGE_MS;
    let backoff = 0;
    let nextScanAt = 0;
    let firstScan = true;
    while (this.running) {
      let more = false;
      try {
        this.woken = false;
        if (this.scanRequested || Date.now() >= nextScanAt) {
          // Stays requested until a scan gets through (and while batches come back full).
          this.scanRequested = true;
          nextScanAt = Date.now() + scanIntervalMs;
          // At start every marker is a leftover: no writer of this process is under way.
          more = (await this.scanOnce(firstScan ? 0 : minAgeMs)).full;
          firstScan = firstScan && more;
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
