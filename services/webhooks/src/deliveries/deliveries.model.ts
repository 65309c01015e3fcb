import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';

/** A delivery stopped before its schedule ran out (its webhook was turned off) is `failed` too. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Attempts kept in a delivery's log, the newest (redeliveries can add more). */
export const MAX_LOGGED_ATTEMPTS = 50;

export interface AttemptDoc {
  at: Date;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string;
  error: string | null;
}

/** One delivery of one event to one webhook, holding its whole state (and its lease). */
export interface DeliveryDoc {
  _id: Types.ObjectId;
  webhookId: Types.ObjectId;
  projectId: string;
  /**
   * The account the webhook belongs to: the worker takes due deliveries account by account in
   * turn, so one account's backlog does not hold up another's deliveries. Absent on deliveries
   * recorded by earlier versions (they take their turn as one more account).
   */
  accountId?: string | null;
  /** The event's id: the `webhook-id` header of every attempt, retries and redeliveries alike. */
  eventId: string;
  type: string;
  /** The exact body bytes, fixed when the delivery was recorded and signed anew per attempt. */
  body: string;
  status: DeliveryStatus;
  attemptCount: number;
  /** The newest MAX_LOGGED_ATTEMPTS attempts, oldest first. */
  attempts: AttemptDoc[];
  lastStatusCode: number | null;
  /** When the next attempt is due (null once finished). */
  nextAttemptAt: Date | null;
  /** How many retries of the schedule have been used. */
  retriesUsed: number;
  /** Manual sends (test events, redeliveries) get one attempt and no automatic retries. */
  manual: boolean;
  /** The claim whose attempt is under way; only it may write the attempt's outcome. */
  leaseOwner: string | null;
  /** When that claim lapses (its worker presumed dead) and another worker may take over. */
  leaseUntil: Date | null;
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
    accountId: { type: String, default: null },
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
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);

// One delivery per event and webhook, however often the event is read.
deliverySchema.index({ eventId: 1, webhookId: 1 }, { unique: true });
// The workers' claims: pending deliveries account by account, in each the longest due first.
deliverySchema.index({ status: 1, accountId: 1, nextAttemptAt: 1, _id: 1 });
// A webhook's delivery log, newest first; also its deletion and cancellation.
deliverySchema.index({ webhookId: 1, createdAt: -1, _id: -1 });
// A deleted project's clean-up.
deliverySchema.index({ projectId: 1 });
// Retention: finished deliveries by age.
deliverySchema.index({ status: 1, updatedAt: 1 });

export const deliveryModel = defineModel<DeliveryDoc>('Delivery', deliverySchema, 'deliveries');
