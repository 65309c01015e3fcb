import type { FilterQuery, Model, Types } from 'mongoose';
import {
  findPage,
  insertOnce,
  mapPage,
  transition,
  type Page,
  type PageRequest,
} from '@platform/shared';
import {
  MAX_LOGGED_ATTEMPTS,
  type AttemptDoc,
  type DeliveryDoc,
  type DeliveryStatus,
} from './deliveries.model';

export type Attempt = AttemptDoc;

/** A delivery as the service reads it: the stored document, its id as a string. */
export type Delivery = Omit<DeliveryDoc, '_id'> & { id: string };

/** What a list shows of a delivery: neither the body nor the attempt log is read for it. */
export type DeliveryListItem = Omit<Delivery, 'body' | 'attempts'>;

export type NewDelivery = Pick<
  DeliveryDoc,
  'webhookId' | 'projectId' | 'accountId' | 'eventId' | 'type' | 'body' | 'manual'
>;

/** A lease: the claim `owner` may attempt the delivery until `until`. */
export interface Lease {
  owner: string;
  until: Date;
}

/** A delivery leased to an attempt: the outcome is written only while the lease is its own. */
export interface Claim {
  deliveryId: Types.ObjectId;
  webhookId: Types.ObjectId;
  leaseOwner: string;
}

/** What an attempt changes besides appending itself to the log. */
export interface AttemptResult {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  retriesUsed: number;
  lastStatusCode: number | null;
}

const toListItem = ({
  _id,
  ...fields
}: Omit<DeliveryDoc, 'body' | 'attempts'>): DeliveryListItem => ({
  ...fields,
  id: _id.toHexString(),
  accountId: fields.accountId ?? null,
  lastStatusCode: fields.lastStatusCode ?? null,
  nextAttemptAt: fields.nextAttemptAt ?? null,
});

const toDelivery = (doc: DeliveryDoc): Delivery => ({
  ...toListItem(doc),
  body: doc.body,
  attempts: doc.attempts ?? [],
});

/** No live lease at `now`: none was taken, or the one taken has lapsed. */
const unleasedAt = (now: Date) => ({ leaseUntil: { $not: { $gt: now } } });

const RELEASED = { leaseOwner: null, leaseUntil: null };

/**
 * The deliveries, one document each. A worker takes a due delivery by leasing it in one
 * conditional write, and writes the attempt's outcome (which gives the lease up) only while the
 * lease is still its own, so of any number of workers exactly one attempts it.
 */
export class DeliveriesRepository {
  constructor(private readonly model: Model<DeliveryDoc>) {}

  /**
   * Records a pending delivery, due at once, or already leased to the worker that will send it
   * right away. Null when this event was already recorded for this webhook (the unique
   * (eventId, webhookId) index makes a re-read event a no-op).
   */
  async insert(fields: NewDelivery, now: Date, lease?: Lease): Promise<Delivery | null> {
    const created = this.model.create({
      ...fields,
      status: 'pending',
      nextAttemptAt: now,
      leaseOwner: lease?.owner ?? null,
      leaseUntil: lease?.until ?? null,
    });
    if (!(await insertOnce(created))) return null;
    return toDelivery((await created).toObject());
  }

  async findInWebhook(webhookId: Types.ObjectId, id: Types.ObjectId): Promise<Delivery | null> {
    const doc = await this.model.findOne({ _id: id, webhookId }).lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  /** A page of the webhook's delivery log, newest first. */
  async listForWebhook(
    webhookId: Types.ObjectId,
    request: PageRequest,
  ): Promise<Page<DeliveryListItem>> {
    const page = await findPage(this.model, { webhookId }, request, { body: 0, attempts: 0 });
    return mapPage(page, toListItem);
  }

  /**
   * Leases a due delivery, skipping `busyWebhookIds`, taking accounts in turn: the one due
   * longest of the first account after `afterAccountId` (in id order) that has one, else,
   * starting over, of the first account that has one (deliveries without an account first).
   * `afterAccountId` null starts over at once. A lapsed lease (its worker died) is taken over
   * like none. Returns the delivery as leased, or null. Served by the index
   * `{status, accountId, nextAttemptAt, _id}`.
   */
  async claimDue(
    now: Date,
    lease: Lease,
    busyWebhookIds: Types.ObjectId[],
    afterAccountId: string | null,
  ): Promise<Delivery | null> {
    const filter: FilterQuery<DeliveryDoc> = {
      status: 'pending',
      nextAttemptAt: { $lte: now },
      ...unleasedAt(now),
    };
    if (busyWebhookIds.length > 0) filter.webhookId = { $nin: busyWebhookIds };
    if (afterAccountId !== null) {
      const next = await this.claimFirst({ ...filter, accountId: { $gt: afterAccountId } }, lease);
      if (next) return next;
    }
    return this.claimFirst(filter, lease);
  }

  private async claimFirst(filter: FilterQuery<DeliveryDoc>, lease: Lease) {
    const doc = await this.model
      .findOneAndUpdate(
        filter,
        { $set: { leaseOwner: lease.owner, leaseUntil: lease.until } },
        { sort: { accountId: 1, nextAttemptAt: 1, _id: 1 }, new: true },
      )
      .lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  }

  /**
   * Writes an attempt and its result, and gives the lease up, if the lease is still `claim`'s.
   * The log keeps the newest MAX_LOGGED_ATTEMPTS attempts. False: the lease was lost (it lapsed
   * and another worker took the delivery over), and nothing was written.
   */
  async recordAttempt(claim: Claim, attempt: Attempt, result: AttemptResult): Promise<boolean> {
    const { matchedCount } = await this.model.updateOne(
      { _id: claim.deliveryId, leaseOwner: claim.leaseOwner },
      {
        $set: { ...result, ...RELEASED },
        $push: { attempts: { $each: [attempt], $slice: -MAX_LOGGED_ATTEMPTS } },
        $inc: { attemptCount: 1 },
      },
    );
    return matchedCount === 1;
  }

  /** Gives a claimed delivery back unattempted, due at `dueAt`, if the lease is still `claim`'s. */
  async release(claim: Claim, dueAt: Date): Promise<void> {
    await this.model.updateOne(
      { _id: claim.deliveryId, leaseOwner: claim.leaseOwner },
      { $set: { nextAttemptAt: dueAt, ...RELEASED } },
    );
  }

  /** Stops a claimed delivery unattempted (its webhook is off or gone). */
  async cancel(claim: Claim): Promise<void> {
    await transition<DeliveryDoc, DeliveryStatus>(this.model, {
      where: { _id: claim.deliveryId, leaseOwner: claim.leaseOwner },
      from: ['pending'],
      to: 'failed',
      set: { nextAttemptAt: null, ...RELEASED },
    });
  }

  /**
   * Stops every pending delivery of a webhook that was turned off. An attempt under way
   * finishes and is recorded; its retry, if any, is stopped when claimed.
   */
  async cancelPending(webhookId: Types.ObjectId): Promise<void> {
    await this.model.updateMany(
      { webhookId, status: 'pending', leaseOwner: null },
      { $set: { status: 'failed', nextAttemptAt: null } },
    );
  }

  /**
   * Makes a delivery due now, unless an attempt of it is under way (or it changed since it was
   * read as `current`). A pending one keeps its retry schedule; a finished one becomes a manual,
   * single new attempt. Null when it was not made due.
   */
  async redeliver(current: Delivery, now: Date): Promise<Delivery | null> {
    const set: Record<string, unknown> = { status: 'pending', nextAttemptAt: now, ...RELEASED };
    if (current.status !== 'pending') set.manual = true;
    const doc = await this.model
      .findOneAndUpdate(
        {
          _id: current.id,
          webhookId: current.webhookId,
          status: current.status,
          ...unleasedAt(now),
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

  /**
   * Deletes the deliveries of an account in a (deleted) project: those recorded with the account,
   * and those of its webhooks `webhookIds` (deliveries recorded before they carried an account).
   */
  async deleteInProject(
    accountId: string,
    projectId: string,
    webhookIds: string[],
  ): Promise<number> {
    return (
      await this.model.deleteMany({
        projectId,
        $or: [{ accountId }, { webhookId: { $in: webhookIds } }],
      })
    ).deletedCount;
  }

  /** Retention: finished deliveries last updated before `cutoff` go. */
  async deleteFinishedBefore(cutoff: Date): Promise<number> {
    const finished: DeliveryStatus[] = ['succeeded', 'failed'];
    return (await this.model.deleteMany({ status: { $in: finished }, updatedAt: { $lt: cutoff } }))
      .deletedCount;
  }
}
