import type { FilterQuery, Model, Types } from 'mongoose';
import { findPage, mapPage, type Page, type PageRequest } from '@platform/shared';
import type { DisabledReason, WebhookDoc, WebhookEventType } from './webhooks.model';

/** A webhook as the service reads it: the stored document, its id as a string. */
export type Webhook = Omit<WebhookDoc, '_id'> & { id: string };

export type NewWebhook = Pick<WebhookDoc, 'projectId' | 'accountId' | 'url' | 'events' | 'secret'>;

export type WebhookChanges = Partial<
  Pick<WebhookDoc, 'url' | 'events' | 'enabled' | 'secret' | 'disabledReason' | 'failingSince'>
>;

const toWebhook = ({ _id, ...fields }: WebhookDoc): Webhook => ({
  ...fields,
  id: _id.toHexString(),
  disabledReason: fields.disabledReason ?? null,
  failingSince: fields.failingSince ?? null,
});

export class WebhooksRepository {
  constructor(private readonly model: Model<WebhookDoc>) {}

  async insert(fields: NewWebhook): Promise<Webhook> {
    const doc = await this.model.create({ ...fields, enabled: true });
    return toWebhook(doc.toObject());
  }

  async countInProject(projectId: string): Promise<number> {
    return this.model.countDocuments({ projectId });
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

  async deleteInProject(projectId: string): Promise<number> {
    const result = await this.model.deleteMany({ projectId });
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
