import type { Types } from 'mongoose';
import { DEFAULT_SERVICE_SETTINGS, type ServiceSettings } from '@platform/shared';
import { NamedResources, namedEntityOf } from '../names/named-resources.repository';
import type { ServiceDocument } from './services.model';

export interface Service extends ServiceSettings {
  id: string;
  accountId: string;
  projectId: string;
  name: string;
  createdAt: Date;
  /** Where its live deployment answers; null until one is DEPLOYED. */
  url: string | null;
  liveDeploymentId: string | null;
}

/** A service's owner: its project, and that project's account. */
export interface ServiceOwner {
  projectId: Types.ObjectId;
  accountId: string;
}

/** What a DEPLOYED deployment makes of its service (the `deployment.status_changed` consumer). */
export interface LiveDeployment {
  owner: ServiceOwner;
  serviceId: Types.ObjectId;
  deploymentId: string;
  url: string;
  /** When it became DEPLOYED: an older DEPLOYED arriving late does not replace a newer one. */
  deployedAt: Date;
}

/** Services as NamedResources owned by a project, plus their part in a project's deletion. */
export class ServicesRepository extends NamedResources<ServiceDocument, ServiceOwner, Service> {
  protected readonly entityFields = {
    accountId: 1,
    projectId: 1,
    repository: 1,
    branch: 1,
    rootDirectory: 1,
    buildCommand: 1,
    startCommand: 1,
    healthCheckPath: 1,
    replicas: 1,
    dockerfilePath: 1,
    url: 1,
    liveDeploymentId: 1,
  } as const;

  protected toEntity(doc: ServiceDocument): Service {
    return {
      ...namedEntityOf(doc),
      accountId: doc.accountId,
      projectId: doc.projectId.toHexString(),
      // Documents written before the settings existed read as the defaults.
      repository: doc.repository ?? DEFAULT_SERVICE_SETTINGS.repository,
      branch: doc.branch ?? DEFAULT_SERVICE_SETTINGS.branch,
      rootDirectory: doc.rootDirectory ?? DEFAULT_SERVICE_SETTINGS.rootDirectory,
      buildCommand: doc.buildCommand ?? DEFAULT_SERVICE_SETTINGS.buildCommand,
      startCommand: doc.startCommand ?? DEFAULT_SERVICE_SETTINGS.startCommand,
      healthCheckPath: doc.healthCheckPath ?? DEFAULT_SERVICE_SETTINGS.healthCheckPath,
      replicas: doc.replicas ?? DEFAULT_SERVICE_SETTINGS.replicas,
      dockerfilePath: doc.dockerfilePath ?? DEFAULT_SERVICE_SETTINGS.dockerfilePath,
      url: doc.url ?? null,
      liveDeploymentId: doc.liveDeploymentId ?? null,
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

  /**
   * Points the live service at a DEPLOYED deployment, unless a deployment that became DEPLOYED
   * later is already live: one conditional update. False when nothing changed.
   */
  async setLive(live: LiveDeployment): Promise<boolean> {
    const result = await this.model.updateOne(
      {
        _id: live.serviceId,
        ...live.owner,
        deletedAt: null,
        // null matches a document without the field as well.
        $or: [{ liveSince: null }, { liveSince: { $lt: live.deployedAt } }],
      },
      { $set: { url: live.url, liveDeploymentId: live.deploymentId, liveSince: live.deployedAt } },
    );
    return result.modifiedCount === 1;
  }

  /**
   * Takes one of the service's `limit` variable slots: a conditional increment, so racing
   * requests cannot take more than there are. False when none is free or the service is gone.
   */
  async takeVariableSlot(owner: ServiceOwner, id: Types.ObjectId, limit: number): Promise<boolean> {
    const result = await this.model.updateOne(
      {
        _id: id,
        ...owner,
        deletedAt: null,
        $or: [{ variableCount: { $lt: limit } }, { variableCount: { $exists: false } }],
      },
      { $inc: { variableCount: 1 } },
    );
    return result.modifiedCount === 1;
  }

  /** Gives a slot back (a variable deleted, or an insert that could not take one). */
  async releaseVariableSlot(id: Types.ObjectId): Promise<void> {
    await this.model.updateOne(
      { _id: id, variableCount: { $gt: 0 } },
      { $inc: { variableCount: -1 } },
    );
  }
}
