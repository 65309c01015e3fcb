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
import type { ServiceModel } from './services.model';

export interface Service {
  id: string;
  accountId: string;
  projectId: string;
  name: string;
  createdAt: Date;
}

export interface ServicePageQuery {
  /** Absent: every live service of the project (bounded by the quota). */
  limit?: number;
  after?: CursorPosition;
}

interface StoredService {
  _id: Types.ObjectId;
  accountId: string;
  projectId: Types.ObjectId;
  name: string;
  createdAt: Date;
  deletedAt?: Date | null;
}

const SERVICE_FIELDS = { accountId: 1, projectId: 1, name: 1, createdAt: 1 } as const;
const LOOKUP_FIELDS = { ...SERVICE_FIELDS, deletedAt: 1 } as const;

const toService = (doc: StoredService): Service => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  projectId: doc.projectId.toHexString(),
  name: doc.name,
  createdAt: doc.createdAt,
});

const live = (projectId: Types.ObjectId, id?: Types.ObjectId) =>
  id ? { _id: id, projectId, deletedAt: null } : { projectId, deletedAt: null };

/** Events are written through `outbox` (the relay publishes them at once). */
export function createServicesRepository(model: ServiceModel, outbox: OutboxWriter) {
  return {
    /** Rejects with a duplicate-key error when the project already has a service of that name. */
    async insert(fields: {
      accountId: string;
      projectId: Types.ObjectId;
      name: string;
    }): Promise<Service> {
      const doc = await model.create({
        ...fields,
        nameKey: nameKeyOf(fields.name),
        createdAt: new Date(),
      });
      return toService(doc.toObject());
    },

    async findLive(projectId: Types.ObjectId, id: Types.ObjectId): Promise<Service | null> {
      // By _id alone, the rest checked here: FerretDB pushes down only a filter on _id and scans
      // the collection for anything more; deployments call this through the internal endpoint.
      const doc = await model.findById(id, LOOKUP_FIELDS).lean<StoredService>();
      return doc && doc.projectId.equals(projectId) && doc.deletedAt == null
        ? toService(doc)
        : null;
    },

    async countLive(projectId: Types.ObjectId): Promise<number> {
      return model.countDocuments(live(projectId));
    },

    /** Whether another service of the project holds the name (deleted ones gave theirs up). */
    async isNameTaken(
      projectId: Types.ObjectId,
      name: string,
      exceptId?: Types.ObjectId,
    ): Promise<boolean> {
      const filter = {
        projectId,
        nameKey: nameKeyOf(name),
        ...(exceptId && { _id: { $ne: exceptId } }),
      };
      return (await model.countDocuments(filter, { limit: 1 })) > 0;
    },

    async listLive(projectId: Types.ObjectId, query: ServicePageQuery): Promise<Service[]> {
      const filter = query.after
        ? { ...live(projectId), ...afterCursorFilter(query.after, (id) => parseObjectId(id)) }
        : live(projectId);
      let find = model.find(filter, SERVICE_FIELDS).sort(NEWEST_FIRST);
      // One more than asked tells toPage whether another page follows.
      if (query.limit !== undefined) find = find.limit(query.limit + 1);
      return (await find.lean<StoredService[]>()).map(toService);
    },

    async renameLive(
      projectId: Types.ObjectId,
      id: Types.ObjectId,
      name: string,
    ): Promise<Service | null> {
      // No projection: FerretDB 1.24 does not implement one on findAndModify.
      const doc = await model
        .findOneAndUpdate(
          live(projectId, id),
          { $set: { name, nameKey: nameKeyOf(name) } },
          { new: true },
        )
        .lean<StoredService>();
      return doc ? toService(doc) : null;
    },

    /**
     * Marks the service deleted, frees its name and queues `event` in its outbox, in one
     * single-document update. False when there was no live service to delete.
     */
    async markDeleted(
      projectId: Types.ObjectId,
      id: Types.ObjectId,
      event: OutboxEntry,
    ): Promise<boolean> {
      const update = withOutbox(
        { $set: { deletedAt: new Date(), nameKey: deletedNameKeyOf(id.toHexString()) } },
        event,
      );
      const result = await outbox.write(model, id, () =>
        model.updateOne(live(projectId, id), update),
      );
      return result.matchedCount === 1;
    },

    /** Removes one service document outright (a create that lost the race with its project's delete). */
    async remove(id: Types.ObjectId): Promise<void> {
      await model.deleteOne({ _id: id });
    },

    /** The end of a service's own cascade: removes it once marked deleted, never a live one. */
    async purgeDeleted(id: Types.ObjectId): Promise<void> {
      await model.deleteOne({ _id: id, deletedAt: { $ne: null } });
    },

    /**
     * The project's part of the cascade. A service whose own `service.deleted` is still waiting in
     * its outbox is left for that event's handler, so the event is not lost with the document.
     */
    async purgeOfProject(projectId: Types.ObjectId): Promise<number> {
      const result = await model.deleteMany({ projectId, outboxPending: { $ne: true } });
      return result.deletedCount;
    },
  };
}

export type ServicesRepository = ReturnType<typeof createServicesRepository>;
