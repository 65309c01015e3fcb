import { Schema, type Connection, type Model, type Types } from 'mongoose';

/** A delivery stopped before its schedule ran out (its webhook was turned off) is `failed` too. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface AttemptDoc {
  at: Date;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string;
  error: string | null;
}

export interface DeliveryDoc {
  _id: Types.ObjectId;
  webhookId: Types.ObjectId;
  projectId: string;
  /** The event's id: the `webhook-id` header of every attempt, retries and redeliveries alike. */
  eventId: string;
  type: string;
  /** The exact body bytes, fixed when the delivery was recorded and signed anew per attempt. */
  body: string;
  status: DeliveryStatus;
  attemptCount: number;
  attempts: AttemptDoc[];
  lastStatusCode: number | null;
  /** When the next attempt is due (null once finished). */
  nextAttemptAt: Date | null;
  /** How many retries of the schedule have been used. */
  retriesUsed: number;
  /** Manual sends (test events, redeliveries) get one attempt and no automatic retries. */
  manual: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const attemptSchema = new Schema<AttemptDoc>(
  {
    at: { type: Date, required: true },
    statusCode: { type: Number, default: null },
    durationMs: { type: Number, required: true },
    responseExcerpt: { type: String, default: '' },
    error: { type: String, default: null },
  },
  { _id: false },
);

const deliverySchema = new Schema<DeliveryDoc>(
  {
    webhookId: { type: Schema.Types.ObjectId, required: true },
    projectId: { type: String, required: true },
    eventId: { type: String, required: true },
    type: { type: String, required: true },
    body: { type: String, required: true },
    status: { type: String, required: true, enum: DELIVERY_STATUSES, default: 'pending' },
    attemptCount: { type: Number, required: true, default: 0 },
    attempts: { type: [attemptSchema], default: [] },
    lastStatusCode: { type: Number, default: null },
    nextAttemptAt: { type: Date, default: null },
    retriesUsed: { type: Number, required: true, default: 0 },
    manual: { type: Boolean, required: true, default: false },
  },
  { timestamps: true, versionKey: false },
);

// One delivery per event and webhook, however often the event is read.
deliverySchema.index({ eventId: 1, webhookId: 1 }, { unique: true });
// The orphan sweep and the retention clean-up.
deliverySchema.index({ status: 1, updatedAt: 1 });
// A webhook's delivery log, newest first; also its deletion and cancellation.
deliverySchema.index({ webhookId: 1, createdAt: -1, _id: -1 });
// A deleted project's clean-up.
deliverySchema.index({ projectId: 1 });

export function deliveryModel(connection: Connection): Model<DeliveryDoc> {
  return connection.model<DeliveryDoc>('Delivery', deliverySchema, 'deliveries');
}

/**
 * The work queue: one small entry per pending delivery, apart from the growing delivery log.
 * FerretDB (SQLite) uses no secondary index and scans a collection for any filter but a bare
 * `_id`, so the worker's frequent claims scan this short list, never the log; the log itself is
 * read and written by `_id` on the hot path.
 */
export interface QueueEntryDoc {
  /** The delivery's `_id`. */
  _id: Types.ObjectId;
  webhookId: Types.ObjectId;
  projectId: string;
  /** When the attempt is due; while one runs, when its lease runs out. */
  dueAt: Date;
  /** Set by the worker that claimed the entry; cleared when it reschedules it. */
  leaseId: string | null;
}

const queueEntrySchema = new Schema<QueueEntryDoc>(
  {
    webhookId: { type: Schema.Types.ObjectId, required: true },
    projectId: { type: String, required: true },
    dueAt: { type: Date, required: true },
    leaseId: { type: String, default: null },
  },
  { versionKey: false },
);

queueEntrySchema.index({ dueAt: 1 });
queueEntrySchema.index({ webhookId: 1 });
queueEntrySchema.index({ projectId: 1 });

export function deliveryQueueModel(connection: Connection): Model<QueueEntryDoc> {
  return connection.model<QueueEntryDoc>('DeliveryQueueEntry', queueEntrySchema, 'delivery_queue');
}
