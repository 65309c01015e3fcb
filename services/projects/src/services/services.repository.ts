import type { Types } from 'mongoose';
import { NamedResources, namedEntityOf } from '../names/named-resources.repository';
import type { ServiceDocument } from './services.model';

export interface Service {
  id: string;
  accountId: string;
  projectId: string;
  name: string;
  createdAt: Date;
}

/** A service's owner: its project, and that project's account. */
export interface ServiceOwner {
  projectId: Types.ObjectId;
  accountId: string;
}

/** Services as NamedResources owned by a project, plus their part in a project's deletion. */
export class ServicesRepository extends NamedResources<ServiceDocument, ServiceOwner, Service> {
  protected readonly entityFields = { accountId: 1, projectId: 1 } as const;

  protected toEntity(doc: ServiceDocument): Service {
    return {
      ...namedEntityOf(doc),
      accountId: doc.accountId,
      projectId: doc.projectId.toHexString(),
    };
  }

  /** Removes one service document outright (a create that lost the race with its project's delete). */
  async remove(id: Types.ObjectId): Promise<void> {
    await this.model.deleteOne({ _id: id });
  }

  /**
   * The project's part of the cascade. A service whose own `service.deleted` is still waiting in
   * its outbox is left for that event's handler, so the event is not lost with the document.
   */
  async purgeOfProject(projectId: Types.ObjectId): Promise<number> {
    const result = await this.model.deleteMany({ projectId, outboxPending: { $ne: true } });
    return result.deletedCount;
  }
}
