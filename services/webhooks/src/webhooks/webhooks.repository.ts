import type { Model, Types } from 'mongoose';
import { findPage, mapPage, type Page, type PageRequest } from '@platform/shared';
import type { DisabledReason, WebhookDoc, WebhookEventType } from './webhooks.model';

export interface Webhook {
  id: string;
  projectId: string;
  accountId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  secret: string;
  disabledReason: DisabledReason | null;
  failingSince: Date | null;
  createdAt: Date;
}

export interface NewWebhook {
  projectId: string;
  accountId: string;
  url: string;
  events: WebhookEventType[];
  secret: string;
}

export type WebhookChanges = Partial<
  Pick<Webhook, 'url' | 'events' | 'enabled' | 'secret' | 'disabledReason' | 'failingSince'>
>;

function toWebhook(doc: WebhookDoc): Webhook {
  return {
    id: doc._id.toHexString(),
    projectId: doc.projectId,
    accountId: doc.accountId,
    url: doc.url,
    events: doc.events,
    enabled: doc.enabled,
    secret: doc.secret,
    disabledReason: doc.disabledReason ?? null,
    failingSince: doc.failingSince ?? null,
    createdAt: doc.createdAt,
  };
}

export class WebhooksRepository {
  constructor(readonly model: Model<WebhookDoc>) {}

  async insert(fields: NewWebhook): Promise<Webhook> {
    const doc = await this.model.create({ ...fields, enabled: true });
    return toWebhook(doc.toObject());
  }

  async countInProject(projectId: string): Promise<number> {
    return this.model.countDocuments({ projectId });
  }

  /** The webhook if it belongs to `projectId` (looked up by `_id` alone, then checked). */
  async findInProject(projectId: string, id: Types.ObjectId): Promise<Webhook | null> {
    const webhook = await this.findById(id);
    return webhook?.projectId === projectId ? webhook : null;
  }

  async findById(id: Types.ObjectId): Promise<Webhook | null> {
    const doc = await this.model.findById(id).lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  /** A page of the project's webhooks, newest first. */
  async listInProject(projectId: string, request: PageRequest): Promise<Page<Webhook>> {
    return mapPage(await findPage(this.model, { projectId }, request), toWebhook);
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

  async update(id: Types.ObjectId, changes: WebhookChanges): Promise<Webhook | null> {
    const doc = await this.model
      .findOneAndUpdate({ _id: id }, { $set: changes }, { new: true })
      .lean<WebhookDoc>();
    return doc ? toWebhook(doc) : null;
  }

  async delete(id: Types.ObjectId): Promise<boolean> {
    const result = await this.model.deleteOne({ _id: id });
    return result.deletedCount > 0;
  }

  async deleteInProject(projectId: string): Promise<number> {
    const result = await this.model.deleteMany({ projectId });
    return result.deletedCount;
  }

  /** Turns a webhook off; true when it was on until now. */
  async disable(id: Types.ObjectId, reason: DisabledReason): Promise<boolean> {
    const before = await this.model
      .findOneAndUpdate({ _id: id }, { $set: { enabled: false, disabledReason: reason } })
      .lean<WebhookDoc>();
    return before?.enabled === true;
  }

  async setFailingSince(id: Types.ObjectId, since: Date | null): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: { failingSince: since } });
  }
}
