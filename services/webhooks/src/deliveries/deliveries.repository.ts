import mongoose, { type Model, type Types } from 'mongoose';
import {
  findPage,
  isDuplicateKeyError,
  mapPage,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { AttemptDoc, DeliveryDoc, DeliveryStatus, QueueEntryDoc } from './deliveries.model';

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
  createdAt: Date;
}

export interface NewDelivery {
  webhookId: Types.ObjectId;
  projectId: string;
  eventId: string;
  type: string;
  body: string;
  manual: boolean;
}

/** A lease written with a new queue entry, for the worker that sends it at once. */
export interface QueueLease {
  leaseId: string;
  leaseUntil: Date;
}

/** A claimed queue entry: the delivery to attempt and the lease that makes it this worker's. */
export interface Claim {
  deliveryId: Types.ObjectId;
  webhookId: Types.ObjectId;
  leaseId: string;
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
    createdAt: doc.createdAt,
  };
}

const toObjectId = (id: string) => new mongoose.Types.ObjectId(id);

/**
 * The delivery log and its work queue. Without transactions, a delivery is made pending before
 * its queue entry is written, and finished before its entry is removed: a crash in between
 * leaves at worst an entry for a finished delivery (dropped when claimed) or a pending delivery
 * without an entry (put back by `requeueOrphans`).
 */
export class DeliveriesRepository {
  constructor(
    readonly model: Model<DeliveryDoc>,
    readonly queue: Model<QueueEntryDoc>,
  ) {}

  /**
   * Records a pending delivery and queues it: due at once, or already leased to the worker
   * that will send it right away. Null when this event was already recorded for this webhook
   * (the unique (eventId, webhookId) index makes a re-read event a no-op).
   */
  async insert(fields: NewDelivery, now: Date, lease?: QueueLease): Promise<Delivery | null> {
    let doc;
    try {
      doc = await this.model.create({ ...fields, status: 'pending', nextAttemptAt: now });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      await this.requeueIfStranded(fields, now);
      return null;
    }
    const delivery = toDelivery(doc.toObject());
    await this.queue.updateOne(
      { _id: doc._id },
      {
        $setOnInsert: {
          webhookId: delivery.webhookId,
          projectId: delivery.projectId,
          dueAt: lease?.leaseUntil ?? now,
          leaseId: lease?.leaseId ?? null,
        },
      },
      { upsert: true },
    );
    return delivery;
  }

  /**
   * A re-read event finds its delivery recorded; if the first reading failed before queueing
   * it (the very reason the event is read again), it is queued now. Rare, so the scan is fine.
   */
  private async requeueIfStranded(fields: NewDelivery, now: Date): Promise<void> {
    const existing = await this.model
      .findOne(
        { eventId: fields.eventId, webhookId: fields.webhookId },
        { status: 1, nextAttemptAt: 1 },
      )
      .lean<Pick<DeliveryDoc, '_id' | 'status' | 'nextAttemptAt'>>();
    if (existing?.status !== 'pending') return;
    await this.queue.updateOne(
      { _id: existing._id },
      {
        $setOnInsert: {
          webhookId: fields.webhookId,
          projectId: fields.projectId,
          dueAt: existing.nextAttemptAt ?? now,
          leaseId: null,
        },
      },
      { upsert: true },
    );
  }

  async findById(id: Types.ObjectId): Promise<Delivery | null> {
    const doc = await this.model.findById(id).lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  /** A page of the webhook's delivery log, newest first. */
  async listForWebhook(webhookId: Types.ObjectId, request: PageRequest): Promise<Page<Delivery>> {
    return mapPage(await findPage(this.model, { webhookId }, request), toDelivery);
  }

  /**
   * Atomically takes the queue entry that has been due longest, skipping `busyWebhookIds`: its
   * `dueAt` moves to the end of the lease, so no other worker takes it, and a dead worker's
   * entry comes back once the lease runs out.
   */
  async claimDue(
    now: Date,
    leaseUntil: Date,
    leaseId: string,
    busyWebhookIds: Types.ObjectId[],
  ): Promise<Claim | null> {
    const filter: Record<string, unknown> = { dueAt: { $lte: now } };
    if (busyWebhookIds.length > 0) filter.webhookId = { $nin: busyWebhookIds };
    const entry = await this.queue
      .findOneAndUpdate(
        filter,
        { $set: { dueAt: leaseUntil, leaseId } },
        { sort: { dueAt: 1, _id: 1 }, new: true },
      )
      .lean<QueueEntryDoc>();
    return entry ? { deliveryId: entry._id, webhookId: entry.webhookId, leaseId } : null;
  }

  /** Writes an attempt's outcome to the log (by `_id` alone: the lease is on the queue entry). */
  async recordAttempt(id: Types.ObjectId, result: AttemptResult): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: result, $inc: { attemptCount: 1 } });
  }

  /** Puts a claimed entry back, due at `dueAt`, if the lease is still `claim`'s. */
  async reschedule(claim: Claim, dueAt: Date): Promise<void> {
    await this.queue.updateOne(
      { _id: claim.deliveryId, leaseId: claim.leaseId },
      { $set: { dueAt, leaseId: null } },
    );
  }

  /** Removes a claimed entry once its delivery is finished (or gone). */
  async dequeue(claim: Claim): Promise<void> {
    await this.queue.deleteOne({ _id: claim.deliveryId, leaseId: claim.leaseId });
  }

  async cancel(claim: Claim): Promise<void> {
    await this.model.updateOne(
      { _id: claim.deliveryId },
      { $set: { status: 'failed', nextAttemptAt: null } },
    );
    await this.dequeue(claim);
  }

  /**
   * Stops every pending delivery of a webhook that was turned off. One attempt still running
   * finishes, and its retry, if any, is stopped when claimed.
   */
  async cancelPending(webhookId: Types.ObjectId, now: Date): Promise<void> {
    await this.model.updateMany(
      { webhookId, status: 'pending' },
      { $set: { status: 'failed', nextAttemptAt: null } },
    );
    await this.queue.deleteMany({ webhookId, $or: [{ leaseId: null }, { dueAt: { $lte: now } }] });
  }

  /** True while a worker holds a live lease on the delivery's queue entry. */
  async isInFlight(id: Types.ObjectId, now: Date): Promise<boolean> {
    const entry = await this.queue.findById(id).lean<QueueEntryDoc>();
    return !!entry?.leaseId && entry.dueAt > now;
  }

  /**
   * Makes a delivery due now. A pending one keeps its retry schedule; a finished one becomes a
   * manual, single new attempt.
   */
  async requeue(delivery: Delivery, now: Date): Promise<Delivery | null> {
    const set: Record<string, unknown> = { status: 'pending', nextAttemptAt: now };
    if (delivery.status !== 'pending') set.manual = true;
    const doc = await this.model
      .findOneAndUpdate({ _id: toObjectId(delivery.id) }, { $set: set }, { new: true })
      .lean<DeliveryDoc>();
    if (!doc) return null;
    await this.queue.updateOne(
      { _id: doc._id },
      {
        $set: { dueAt: now, leaseId: null },
        $setOnInsert: { webhookId: doc.webhookId, projectId: doc.projectId },
      },
      { upsert: true },
    );
    return toDelivery(doc);
  }

  /**
   * Queues again every pending delivery that lost its queue entry (a crash between the two
   * writes). Scans the log, so it runs rarely. Returns how many were put back.
   */
  async requeueOrphans(now: Date): Promise<number> {
    const pending = await this.model
      .find({ status: 'pending' }, { webhookId: 1, projectId: 1, nextAttemptAt: 1 })
      .lean<Pick<DeliveryDoc, '_id' | 'webhookId' | 'projectId' | 'nextAttemptAt'>[]>();
    let requeued = 0;
    for (const delivery of pending) {
      const result = await this.queue.updateOne(
        { _id: delivery._id },
        {
          $setOnInsert: {
            webhookId: delivery.webhookId,
            projectId: delivery.projectId,
            dueAt: delivery.nextAttemptAt ?? now,
            leaseId: null,
          },
        },
        { upsert: true },
      );
      requeued += result.upsertedCount;
    }
    return requeued;
  }

  async deleteForWebhook(webhookId: Types.ObjectId): Promise<number> {
    await this.queue.deleteMany({ webhookId });
    return (await this.model.deleteMany({ webhookId })).deletedCount;
  }

  async deleteInProject(projectId: string): Promise<number> {
    await this.queue.deleteMany({ projectId });
    return (await this.model.deleteMany({ projectId })).deletedCount;
  }

  /** Retention: finished deliveries last updated before `cutoff` go. */
  async deleteFinishedBefore(cutoff: Date): Promise<number> {
    return (await this.model.deleteMany({ status: { $ne: 'pending' }, updatedAt: { $lt: cutoff } }))
      .deletedCount;
  }
}
