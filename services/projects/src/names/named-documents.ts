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

/** What a project and a service document have in common. */
export interface NamedDocument {
  _id: Types.ObjectId;
  name: string;
  /** nameKeyOf(name) while live, deletedNameKeyOf(id) once deleted; unique per owner. */
  nameKey: string;
  createdAt: Date;
  /** Set by DELETE: from then on the document reads as 404 until the cascade removes it. */
  deletedAt: Date | null;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

/**
 * Projects and services are stored alike: one document each under an owner (`O`: the fields that
 * scope it, such as `{accountId}`), its name unique per owner through a unique index on
 * `{...owner, nameKey}`, its list served by the index `{...owner, deletedAt, createdAt, _id}`.
 * Every read and write names the owner and, but for the cascade's, `deletedAt: null`: one
 * conditional single-document operation, so a write that races a DELETE either comes first or
 * finds nothing. A name already taken rejects the write with the duplicate-key error (11000),
 * on insert and on update alike; the caller turns it into its 409 (`rejectDuplicate`).
 */
export function namedDocuments<D extends NamedDocument, O extends object, T>(
  model: Model<D>,
  options: {
    outbox: OutboxWriter;
    toEntity: (doc: D) => T;
    /** The fields `toEntity` reads: what reads project to. */
    fields: Record<string, 1>;
  },
) {
  const { outbox, toEntity, fields } = options;
  const live = (owner: O, id?: Types.ObjectId) =>
    ({ ...owner, ...(id && { _id: id }), deletedAt: null }) as FilterQuery<D>;

  return {
    async insert(owner: O, values: { name: string } & Partial<D>): Promise<T> {
      const doc = await model.create({
        ...owner,
        ...values,
        nameKey: nameKeyOf(values.name),
        createdAt: new Date(),
      });
      return toEntity(doc.toObject() as D);
    },

    async findLive(owner: O, id: Types.ObjectId): Promise<T | null> {
      const doc = await model.findOne(live(owner, id), fields).lean<D>();
      return doc ? toEntity(doc) : null;
    },

    async countLive(owner: O): Promise<number> {
      return model.countDocuments(live(owner));
    },

    /** Newest first, a page at a time (every live one without a limit). */
    async listLive(owner: O, page: PageRequest): Promise<Page<T>> {
      return mapPage(await findPage(model, live(owner), page, fields), toEntity);
    },

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
      const doc = await model
        .findOneAndUpdate(live(owner, id), { $set } as UpdateQuery<D>, { new: true })
        .lean<D>();
      return doc ? toEntity(doc) : null;
    },

    /**
     * Marks the document deleted, frees its name and queues `event` in its outbox: one update, so
     * the deletion and its announcement cannot part. False when there was no live one to delete.
     */
    async markDeleted(owner: O, id: Types.ObjectId, event: OutboxEntry): Promise<boolean> {
      const update = withOutbox(
        { $set: { deletedAt: new Date(), nameKey: deletedNameKeyOf(id.toHexString()) } },
        event,
      );
      const result = await outbox.write(model, id, () =>
        model.updateOne(live(owner, id), update as UpdateQuery<D>),
      );
      return result.matchedCount === 1;
    },

    /** Whoever owns it: for the cascade, which acts on events rather than on a caller's behalf. */
    async isLive(id: Types.ObjectId): Promise<boolean> {
      return (await model.exists({ _id: id, deletedAt: null } as FilterQuery<D>)) !== null;
    },

    /** The end of the cascade: removes a document that was marked deleted, never a live one. */
    async purgeDeleted(id: Types.ObjectId): Promise<void> {
      await model.deleteOne({ _id: id, deletedAt: { $ne: null } } as FilterQuery<D>);
    },
  };
}
