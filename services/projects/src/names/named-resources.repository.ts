import type { FilterQuery, Model, Types, UpdateQuery } from 'mongoose';
import {
  findPage,
  mapPage,
  withOutbox,
  type OutboxEntry,
  type OutboxWriter,
  type Page,
  type PageRequest,
} from '@platform/shared';
import { deletedNameKeyOf, nameKeyOf } from './name-key';
import type { NamedDocument } from './named-resources.model';

/** What every project and service entity has; a repository adds its owner's fields. */
export const namedEntityOf = (doc: NamedDocument) => ({
  id: doc._id.toHexString(),
  name: doc.name,
  createdAt: doc.createdAt,
});

/**
 * Projects and services are stored alike, and ProjectsRepository and ServicesRepository are this
 * class: one document each under an owner (`O`: the fields that scope it, such as `{accountId}`),
 * its name unique per owner through a unique index on `{...owner, nameKey}`, its list served by
 * the index `{...owner, deletedAt, createdAt, _id}`. Every read and write names the owner and,
 * but for the cascade's, `deletedAt: null`: one conditional single-document operation, so a write
 * that races a DELETE either comes first or finds nothing. A name already taken rejects the write
 * with the duplicate-key error (11000), on insert and on update alike; NamedResourceService turns
 * it into its 409. Events are written through `outbox` (the relay publishes them at once).
 */
export abstract class NamedResources<D extends NamedDocument, O extends object, T> {
  /** The fields `toEntity` reads besides name and createdAt: what reads project to. */
  protected abstract readonly entityFields: Record<string, 1>;

  /** The entity of a document (`{...namedEntityOf(doc), ...its own fields}`). */
  protected abstract toEntity(doc: D): T;

  constructor(
    protected readonly model: Model<D>,
    private readonly outbox: OutboxWriter,
  ) {}

  async insert(owner: O, values: { name: string } & Partial<D>): Promise<T> {
    const doc = await this.model.create({
      ...owner,
      ...values,
      nameKey: nameKeyOf(values.name),
      createdAt: new Date(),
    });
    return this.toEntity(doc.toObject() as D);
  }

  async findLive(owner: O, id: Types.ObjectId): Promise<T | null> {
    const doc = await this.model.findOne(this.live(owner, id), this.fields()).lean<D>();
    return doc ? this.toEntity(doc) : null;
  }

  async countLive(owner: O): Promise<number> {
    return this.model.countDocuments(this.live(owner));
  }

  /** Newest first, a page at a time (every live one without a limit). */
  async listLive(owner: O, page: PageRequest): Promise<Page<T>> {
    const found = await findPage(this.model, this.live(owner), page, this.fields());
    return mapPage(found, (doc) => this.toEntity(doc));
  }

  /** The document as changed, or null when the owner has no such live document. */
  async updateLive(
    owner: O,
    id: Types.ObjectId,
    changes: { name?: string } & Partial<D>,
  ): Promise<T | null> {
    const $set: Record<string, unknown> = Object.fromEntries(
      Object.entries(changes).filter(([, value]) => value !== undefined),
    );
    if (changes.name !== undefined) $set.nameKey = nameKeyOf(changes.name);
    const doc = await this.model
      .findOneAndUpdate(this.live(owner, id), { $set } as UpdateQuery<D>, { new: true })
      .lean<D>();
    return doc ? this.toEntity(doc) : null;
  }

  /**
   * Marks the document deleted, frees its name and queues `event` in its outbox: one update, so
   * the deletion and its announcement cannot part. False when there was no live one to delete.
   */
  async markDeleted(owner: O, id: Types.ObjectId, event: OutboxEntry): Promise<boolean> {
    const update = withOutbox(
      { $set: { deletedAt: new Date(), nameKey: deletedNameKeyOf(id.toHexString()) } },
      event,
    );
    const result = await this.outbox.write(this.model, id, () =>
      this.model.updateOne(this.live(owner, id), update as UpdateQuery<D>),
    );
    return result.matchedCount === 1;
  }

  /** Whoever owns it: for the cascade, which acts on events rather than on a caller's behalf. */
  async isLive(id: Types.ObjectId): Promise<boolean> {
    return (await this.model.exists({ _id: id, deletedAt: null } as FilterQuery<D>)) !== null;
  }

  /** The end of the cascade: removes a document that was marked deleted, never a live one. */
  async purgeDeleted(id: Types.ObjectId): Promise<void> {
    await this.model.deleteOne({ _id: id, deletedAt: { $ne: null } } as FilterQuery<D>);
  }

  private fields(): Record<string, 1> {
    return { name: 1, createdAt: 1, ...this.entityFields };
  }

  private live(owner: O, id?: Types.ObjectId): FilterQuery<D> {
    return { ...owner, ...(id && { _id: id }), deletedAt: null } as FilterQuery<D>;
  }
}
