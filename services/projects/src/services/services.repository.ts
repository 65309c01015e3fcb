import type { Types } from 'mongoose';
import type { OutboxWriter } from '@platform/shared';
import { namedDocuments } from '../names/named-documents';
import type { ServiceDocument, ServiceModel } from './services.model';

export interface Service {
  id: string;
  accountId: string;
  projectId: string;
  name: string;
  createdAt: Date;
}

const toService = (doc: ServiceDocument): Service => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  projectId: doc.projectId.toHexString(),
  name: doc.name,
  createdAt: doc.createdAt,
});

/** A service's owner: its project, and that project's account. */
export interface ServiceOwner {
  projectId: Types.ObjectId;
  accountId: string;
}

/** Events are written through `outbox` (the relay publishes them at once). */
export function createServicesRepository(model: ServiceModel, outbox: OutboxWriter) {
  return {
    ...namedDocuments<ServiceDocument, ServiceOwner, Service>(model, {
      outbox,
      toEntity: toService,
      fields: { accountId: 1, projectId: 1, name: 1, createdAt: 1 },
    }),

    /** Removes one service document outright (a create that lost the race with its project's delete). */
    async remove(id: Types.ObjectId): Promise<void> {
      await model.deleteOne({ _id: id });
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
