import mongoose, { type Model, type Types } from 'mongoose';
import {
  NEWEST_FIRST,
  afterCursorFilter,
  isDuplicateKeyError,
  type CursorPosition,
} from '@platform/shared';
import type { AttemptDoc, DeliveryDoc, DeliveryStatus } from './deliveries.model';

export type Attempt = AttemptDoc;

export interface Delivery {
  id: string;
  webhookId: Types.ObjectId;
  projectId: string;
  eventId: string;
  type: string;
  body: string;
  status: DeliveryStatus;
  attemptCount: number;
  attempts: Attempt[];
  lastStatusCode: number | null;
  nextAttemptAt: Date | null;
  retriesUsed: number;
  manual: boolean;
  leaseId: string | null;
  createdAt: Date;
}

export interface NewDelivery {
  webhookId: Types.ObjectId;
  projectId: string;
  eventId: string;
  type: string;
  body: string;
  manual: boolean;
  nextAttemptAt: Date;
}

/** What an attempt changes besides appending itself to the log. */
export interface AttemptResult {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  retriesUsed: number;
  lastStatusCode: number | null;
  /** The whole log after this attempt (already capped). */
  attempts: Attempt[];
}

function toDelivery(doc: DeliveryDoc): Delivery {
  return {
    id: doc._id.toHexString(),
    webhookId: doc.webhookId,
    projectId: doc.projectId,
    eventId: doc.eventId,
    type: doc.type,
    body: doc.body,
    status: doc.status,
    attemptCount: doc.attemptCount,
    attempts: doc.attempts ?? [],
    lastStatusCode: doc.lastStatusCode ?? null,
    nextAttemptAt: doc.nextAttemptAt ?? null,
    retriesUsed: doc.retriesUsed,
    manual: doc.manual,
    leaseId: doc.leaseId ?? null,
    createdAt: doc.createdAt,
  };
}

const toObjectId = (id: string) => new mongoose.Types.ObjectId(id);

export class DeliveriesRepository {
  constructor(readonly model: Model<DeliveryDoc>) {}

  /**
   * Records the delivery of an event to a webhook unless it exists already (the unique
   * (eventId, webhookId) index makes a re-read event a no-op). True when it was new.
   */
  async recordOnce(fields: NewDelivery): Promise<boolean> {
    try {
      const result = await this.model.updateOne(
        { eventId: fields.eventId, webhookId: fields.webhookId },
        { $setOnInsert: { ...fields, status: 'pending' } },
        { upsert: true },
      );
      return result.upsertedCount > 0;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }

  async insert(fields: NewDelivery): Promise<Delivery> {
    const doc = await this.model.create({ ...fields, status: 'pending' });
    return toDelivery(doc.toObject());
  }

  async findForWebhook(webhookId: Types.ObjectId, id: Types.ObjectId): Promise<Delivery | null> {
    const doc = await this.model.findOne({ _id: id, webhookId }).lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  /** `limit + 1` rows newest first, after `after` when given (see toPage). */
  async listForWebhook(
    webhookId: Types.ObjectId,
    limit: number,
    after?: CursorPosition,
  ): Promise<Delivery[]> {
    const filter = after ? { webhookId, ...afterCursorFilter(after, toObjectId) } : { webhookId };
    const docs = await this.model
      .find(filter)
      .sort(NEWEST_FIRST)
      .limit(limit + 1)
      .lean<DeliveryDoc[]>();
    return docs.map(toDelivery);
  }

  /**
   * Atomically takes the pending delivery that has been due longest: its `nextAttemptAt` moves
   * to the end of the lease, so no other worker takes it, and a crashed worker's delivery comes
   * back once the lease runs out. Webhooks in `busyWebhookIds` are skipped.
   */
  async claimDue(
    now: Date,
    leaseUntil: Date,
    leaseId: string,
    busyWebhookIds: Types.ObjectId[],
  ): Promise<Delivery | null> {
    const filter: Record<string, unknown> = { status: 'pending', nextAttemptAt: { $lte: now } };
    if (busyWebhookIds.length > 0) filter.webhookId = { $nin: busyWebhookIds };
    const doc = await this.model
      .findOneAndUpdate(
        filter,
        { $set: { nextAttemptAt: leaseUntil, leaseId } },
        { sort: { nextAttemptAt: 1 }, new: true },
      )
      .lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  /** Writes an attempt's outcome if the lease is still `leaseId`'s; false otherwise. */
  async completeAttempt(id: string, leaseId: string, result: AttemptResult): Promise<boolean> {
    const outcome = await this.model.updateOne(
      { _id: toObjectId(id), leaseId },
      { $set: { ...result, leaseId: null }, $inc: { attemptCount: 1 } },
    );
    return outcome.modifiedCount > 0;
  }

  /** Gives a claimed delivery back without an attempt (shutdown), due at once. */
  async release(id: string, leaseId: string, now: Date): Promise<void> {
    await this.model.updateOne(
      { _id: toObjectId(id), leaseId },
      { $set: { nextAttemptAt: now, leaseId: null } },
    );
  }

  async cancel(id: string, leaseId: string): Promise<void> {
    await this.model.updateOne(
      { _id: toObjectId(id), leaseId },
      { $set: { status: 'cancelled', nextAttemptAt: null, leaseId: null } },
    );
  }

  /** Stops every pending delivery of a webhook that was turned off. */
  async cancelPending(webhookId: Types.ObjectId): Promise<number> {
    const result = await this.model.updateMany(
      { webhookId, status: 'pending' },
      { $set: { status: 'cancelled', nextAttemptAt: null } },
    );
    return result.modifiedCount;
  }

  /**
   * Makes a delivery due now, unless an attempt of it is running (a live lease). A pending one
   * keeps its retry schedule; a finished one becomes a manual, single new attempt.
   */
  async requeue(
    webhookId: Types.ObjectId,
    id: Types.ObjectId,
    expected: DeliveryStatus,
    now: Date,
  ): Promise<Delivery | null> {
    const set: Record<string, unknown> = { status: 'pending', nextAttemptAt: now, leaseId: null };
    if (expected !== 'pending') set.manual = true;
    const doc = await this.model
      .findOneAndUpdate(
        {
          _id: id,
          webhookId,
          status: expected,
          $or: [{ leaseId: null }, { nextAttemptAt: { $lte: now } }],
        },
        { $set: set },
        { new: true },
      )
      .lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  async deleteForWebhook(webhookId: Types.ObjectId): Promise<number> {
    return (await this.model.deleteMany({ webhookId })).deletedCount;
  }

  async deleteInProject(projectId: string): Promise<number> {
    return (await this.model.deleteMany({ projectId })).deletedCount;
  }
}
