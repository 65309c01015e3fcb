import type { FilterQuery, Model, Types } from 'mongoose';
import {
  findPage,
  isDuplicateKeyError,
  mapPage,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { SealedSecrets } from './webhook-secrets';
import type {
  DisabledReason,
  WebhookDoc,
  WebhookEventType,
  WebhookQuotaDoc,
} from './webhooks.model';

/**
 * A webhook as the service reads it: the stored document, its id as a string. `secret` and
 * `previousSecret` are the stored (sealed) values: WebhookSecrets opens them.
 */
export type Webhook = Omit<WebhookDoc, '_id' | 'previousSecret' | 'previousSecretExpiresAt'> & {
  id: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
};

export type NewWebhook = Pick<
  WebhookDoc,
  '_id' | 'projectId' | 'accountId' | 'url' | 'events' | 'secret'
>;

export type WebhookChanges = Partial<
  Pick<WebhookDoc, 'url' | 'events' | 'enabled' | 'disabledReason' | 'failingSince'>
>;

/**
 * A rotation: the new sealed secret, the old one sealed as previous and when that expires (none
 * when the old one could not be opened).
 */
export interface SecretRotation {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

const toWebhook = ({ _id, ...fields }: WebhookDoc): Webhook => ({
  ...fields,
  id: _id.toHexString(),
  disabledReason: fields.disabledReason ?? null,
  failingSince: fields.failingSince ?? null,
  previousSecret: fields.previousSecret ?? null,
  previousSecretExpiresAt: fields.previousSecretExpiresAt ?? null,
});

/** Webhooks whose secrets the housekeeping looks at per batch. */
const RESEAL_BATCH = 100;

export class WebhooksRepository {
  constructor(
    private readonly model: Model<WebhookDoc>,
    private readonly quotas: Model<WebhookQuotaDoc>,
  ) {}

  async insert(fields: NewWebhook): Promise<Webhook> {
    const doc = await this.model.create({ ...fields, enabled: true });
    return toWebhook(doc.toObject());
  }

  /**
   * Takes one of the project's `limit` webhook slots: a conditional `$inc` of its count, so
   * racing creates cannot take more than there are. False when none is free. A project's count
   * is created on its first use from the webhooks it has (ones made before counts existed).
   */
  async takeSlot(projectId: string, limit: number): Promise<boolean> {
    const take = () =>
      this.quotas.updateOne(
        { _id: projectId, webhooks: { $lt: limit } },
        { $inc: { webhooks: 1 } },
      );
    if ((await take()).modifiedCount === 1) return true;
    // Full, or no count yet (made meanwhile by a racing create, maybe): make sure there is one,
    // then try once more. Only a full count refuses.
    if (!(await this.quotas.exists({ _id: projectId }))) {
      try {
        const existing = await this.model.countDocuments({ projectId });
        await this.quotas.create({ _id: projectId, webhooks: existing });
      } catch (err) {
        // Another request created it first: its count is as good.
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
    return (await take()).modifiedCount === 1;
  }

  /** Gives a slot back (a webhook deleted, or a create that did not insert). */
  async releaseSlot(projectId: string): Promise<void> {
    await this.quotas.updateOne(
      { _id: projectId, webhooks: { $gt: 0 } },
      { $inc: { webhooks: -1 } },
    );
  }

  async findInProject(projectId: string, id: Types.ObjectId): Promise<Webhook | null> {
    const doc = await this.model.findOne({ _id: id, projectId }).lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  async findById(id: Types.ObjectId): Promise<Webhook | null> {
    const doc = await this.model.findById(id).lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  /** A page of the project's webhooks, newest first. */
  async listInProject(projectId: string, request: PageRequest): Promise<Page<Webhook>> {
    return mapPage(await findPage<WebhookDoc>(this.model, { projectId }, request), toWebhook);
  }

  /** The enabled webhooks of a project that asked for events of `type`. */
  async findSubscribed(
    projectId: string,
    accountId: string,
    type: WebhookEventType,
  ): Promise<Webhook[]> {
    const docs = await this.model
      .find({ projectId, accountId, enabled: true, events: type })
      .lean<WebhookDoc[]>();
    return docs.map(toWebhook);
  }

  async updateInProject(
    projectId: string,
    id: Types.ObjectId,
    changes: WebhookChanges,
  ): Promise<Webhook | null> {
    const doc = await this.model
      .findOneAndUpdate({ _id: id, projectId }, { $set: changes }, { new: true })
      .lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  async deleteFromProject(projectId: string, id: Types.ObjectId): Promise<boolean> {
    const result = await this.model.deleteOne({ _id: id, projectId });
    return result.deletedCount > 0;
  }

  /** Replaces the secret, keeping the one it replaces, if the secret is still `current`. */
  async rotateSecret(
    projectId: string,
    id: Types.ObjectId,
    current: string,
    rotation: SecretRotation,
  ): Promise<Webhook | null> {
    const doc = await this.model
      .findOneAndUpdate({ _id: id, projectId, secret: current }, { $set: rotation }, { new: true })
      .lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  /**
   * Webhooks that may need their secrets sealed anew: any secret not sealed under `keyId` (in
   * clear, or under a previous key), or a previous secret past its expiry. A batch at a time,
   * after `afterId`, in id order.
   */
  async findStaleSecrets(
    keyId: string,
    now: Date,
    afterId: Types.ObjectId | null,
  ): Promise<Webhook[]> {
    const sealedUnderKey = new RegExp(`^v1:${escapeRegExp(keyId)}:`);
    const filter: FilterQuery<WebhookDoc> = {
      $or: [
        { secret: { $not: sealedUnderKey } },
        { previousSecret: { $ne: null, $not: sealedUnderKey } },
        { previousSecret: { $ne: null }, previousSecretExpiresAt: { $lte: now } },
      ],
    };
    if (afterId) filter._id = { $gt: afterId };
    const docs = await this.model
      .find(filter)
      .sort({ _id: 1 })
      .limit(RESEAL_BATCH)
      .lean<WebhookDoc[]>();
    return docs.map(toWebhook);
  }

  /**
   * Stores secrets sealed anew, if the webhook still holds exactly what was read (`read`): a
   * rotation or another replica's reseal in between wins, and this one changes nothing.
   */
  async replaceSecrets(read: Webhook, sealed: SealedSecrets): Promise<boolean> {
    const result = await this.model.updateOne(
      {
        _id: read.id,
        secret: read.secret,
        previousSecret: read.previousSecret,
      },
      {
        $set: {
          secret: sealed.secret,
          previousSecret: sealed.previousSecret,
          previousSecretExpiresAt: sealed.previousSecret ? read.previousSecretExpiresAt : null,
        },
      },
    );
    return result.modifiedCount === 1;
  }

  /** Deletes the project's webhooks and its count; returns how many webhooks went. */
  /** The ids of an account's webhooks in a project. */
  async idsInProject(accountId: string, projectId: string): Promise<string[]> {
    const docs = await this.model.find({ projectId, accountId }, { _id: 1 }).lean();
    return docs.map((d) => String(d._id));
  }

  /** Deletes an account's webhooks in a (deleted) project, and the project's quota counter. */
  async deleteInProject(accountId: string, projectId: string): Promise<number> {
    const result = await this.model.deleteMany({ projectId, accountId });
    await this.quotas.deleteOne({ _id: projectId });
    return result.deletedCount;
  }

  /**
   * Turns a webhook off, if it is on (and, with `failingSince`, has been failing since then or
   * longer). True for the one caller that turned it off.
   */
  async disable(id: Types.ObjectId, reason: DisabledReason, failingSince?: Date): Promise<boolean> {
    const filter: FilterQuery<WebhookDoc> = { _id: id, enabled: true };
    if (failingSince) filter.failingSince = { $lte: failingSince };
    const result = await this.model.updateOne(filter, {
      $set: { enabled: false, disabledReason: reason },
    });
    return result.modifiedCount === 1;
  }

  /** Notes when the current run of failures began, unless it is noted already. */
  async markFailing(id: Types.ObjectId, since: Date): Promise<void> {
    await this.model.updateOne({ _id: id, failingSince: null }, { $set: { failingSince: since } });
  }

  /** Ends the current run of failures (a success). */
  async clearFailing(id: Types.ObjectId): Promise<void> {
    await this.model.updateOne(
      { _id: id, failingSince: { $ne: null } },
      { $set: { failingSince: null } },
    );
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
