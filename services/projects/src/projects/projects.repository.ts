import type { Types } from 'mongoose';
import {
  afterCursorFilter,
  NEWEST_FIRST,
  parseObjectId,
  withOutbox,
  type CursorPosition,
  type OutboxEntry,
  type OutboxWriter,
} from '@platform/shared';
import { deletedNameKeyOf, nameKeyOf } from '../names/name-key';
import type { ProjectModel } from './projects.model';

export interface Project {
  id: string;
  accountId: string;
  name: string;
  description: string;
  createdAt: Date;
}

export interface ProjectPageQuery {
  /** Absent: every live project of the account (bounded by the quota). */
  limit?: number;
  after?: CursorPosition;
}

interface StoredProject {
  _id: Types.ObjectId;
  accountId: string;
  name: string;
  description?: string | null;
  createdAt: Date;
  deletedAt?: Date | null;
}

const PROJECT_FIELDS = { accountId: 1, name: 1, description: 1, createdAt: 1 } as const;
const LOOKUP_FIELDS = { ...PROJECT_FIELDS, deletedAt: 1 } as const;

const toProject = (doc: StoredProject): Project => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  name: doc.name,
  description: doc.description ?? '',
  createdAt: doc.createdAt,
});

/** Live means "not deleted": a deleted project is invisible to every read from the moment of DELETE. */
const live = (accountId: string, id?: Types.ObjectId) =>
  id ? { _id: id, accountId, deletedAt: null } : { accountId, deletedAt: null };

/** Events are written through `outbox` (the relay publishes them at once). */
export function createProjectsRepository(model: ProjectModel, outbox: OutboxWriter) {
  return {
    /** Rejects with a duplicate-key error when the account already has a project of that name. */
    async insert(fields: {
      accountId: string;
      name: string;
      description: string;
    }): Promise<Project> {
      const doc = await model.create({
        ...fields,
        nameKey: nameKeyOf(fields.name),
        createdAt: new Date(),
      });
      return toProject(doc.toObject());
    },

    async findLive(accountId: string, id: Types.ObjectId): Promise<Project | null> {
      // By _id alone, ownership and the mark checked here: FerretDB pushes down only a filter on
      // _id and scans the whole collection for anything more. This backs every nested route and
      // the internal endpoint, so it must stay fast.
      const doc = await model.findById(id, LOOKUP_FIELDS).lean<StoredProject>();
      return doc && doc.accountId === accountId && doc.deletedAt == null ? toProject(doc) : null;
    },

    async existsLive(accountId: string, id: Types.ObjectId): Promise<boolean> {
      const doc = await model.findById(id, { accountId: 1, deletedAt: 1 }).lean<StoredProject>();
      return doc !== null && doc.accountId === accountId && doc.deletedAt == null;
    },

    /** Whoever owns it: for the cascade, which acts on events rather than on a caller's behalf. */
    async isLive(id: Types.ObjectId): Promise<boolean> {
      const doc = await model.findById(id, { deletedAt: 1 }).lean<StoredProject>();
      return doc !== null && doc.deletedAt == null;
    },

    async countLive(accountId: string): Promise<number> {
      return model.countDocuments(live(accountId));
    },

    /** Whether another project of the account holds the name (deleted ones gave theirs up). */
    async isNameTaken(
      accountId: string,
      name: string,
      exceptId?: Types.ObjectId,
    ): Promise<boolean> {
      const filter = {
        accountId,
        nameKey: nameKeyOf(name),
        ...(exceptId && { _id: { $ne: exceptId } }),
      };
      return (await model.countDocuments(filter, { limit: 1 })) > 0;
    },

    async listLive(accountId: string, query: ProjectPageQuery): Promise<Project[]> {
      const filter = query.after
        ? { ...live(accountId), ...afterCursorFilter(query.after, (id) => parseObjectId(id)) }
        : live(accountId);
      let find = model.find(filter, PROJECT_FIELDS).sort(NEWEST_FIRST);
      // One more than asked tells toPage whether another page follows.
      if (query.limit !== undefined) find = find.limit(query.limit + 1);
      return (await find.lean<StoredProject[]>()).map(toProject);
    },

    async updateLive(
      accountId: string,
      id: Types.ObjectId,
      changes: { name?: string; description?: string },
    ): Promise<Project | null> {
      const $set: Record<string, string> = {};
      if (changes.name !== undefined)
        Object.assign($set, { name: changes.name, nameKey: nameKeyOf(changes.name) });
      if (changes.description !== undefined) $set.description = changes.description;
      // No projection: FerretDB 1.24 does not implement one on findAndModify.
      const doc = await model
        .findOneAndUpdate(live(accountId, id), { $set }, { new: true })
        .lean<StoredProject>();
      return doc ? toProject(doc) : null;
    },

    /**
     * Marks the project deleted, frees its name and queues `event` in its outbox: one
     * single-document update, so the deletion and its announcement cannot part. False when there
     * was no live project to delete.
     */
    async markDeleted(accountId: string, id: Types.ObjectId, event: OutboxEntry): Promise<boolean> {
      const update = withOutbox(
        { $set: { deletedAt: new Date(), nameKey: deletedNameKeyOf(id.toHexString()) } },
        event,
      );
      const result = await outbox.write(model, id, () =>
        model.updateOne(live(accountId, id), update),
      );
      return result.matchedCount === 1;
    },

    /** The end of the cascade: removes a project that was marked deleted, never a live one. */
    async purgeDeleted(id: Types.ObjectId): Promise<void> {
      await model.deleteOne({ _id: id, deletedAt: { $ne: null } });
    },
  };
}

export type ProjectsRepository = ReturnType<typeof createProjectsRepository>;
