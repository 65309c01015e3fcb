import { Types, type Model } from 'mongoose';
import {
  NEWEST_FIRST,
  TOPICS,
  afterCursorFilter,
  newEvent,
  outboxEntry,
  parseObjectId,
  withOutbox,
  type CursorPosition,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';
import { NO_LEASE, type DeploymentDoc } from './deployments.model';
import { assertTransitionAllowed, type DeploymentStatus } from './status';

/** A deployment as the rest of the service sees it: a plain object with a string id. */
export interface Deployment {
  id: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  status: DeploymentStatus;
  commitHash: string;
  commitMessage: string;
  logs: string;
  createdAt: Date;
  statusChangedAt: Date;
  deployedAt: Date | null;
  leaseOwner: string | null;
  leaseUntil: Date;
  attempts: number;
}

/** The service a deployment belongs to, as addressed in the URL. */
export interface ServiceRef {
  accountId: string;
  projectId: string;
  serviceId: string;
}

export interface NewDeployment extends ServiceRef {
  id: Types.ObjectId;
  commitHash: string;
  commitMessage: string;
  createdAt: Date;
}

export interface TransitionOptions {
  /** Only while this worker holds the lease (the pipeline); the API's cancel passes none. */
  leaseOwner?: string;
  /** Written in the same update, e.g. the pipeline's logs and its lease release. */
  set?: Partial<Pick<DeploymentDoc, 'logs' | 'leaseOwner' | 'leaseUntil'>>;
}

export function toDeployment(doc: DeploymentDoc): Deployment {
  return {
    id: doc._id.toHexString(),
    accountId: doc.accountId,
    projectId: doc.projectId,
    serviceId: doc.serviceId,
    status: doc.status,
    commitHash: doc.commitHash,
    commitMessage: doc.commitMessage ?? '',
    logs: doc.logs ?? '',
    createdAt: doc.createdAt,
    statusChangedAt: doc.statusChangedAt,
    deployedAt: doc.deployedAt ?? null,
    leaseOwner: doc.leaseOwner ?? null,
    leaseUntil: doc.leaseUntil ?? NO_LEASE,
    attempts: doc.attempts ?? 0,
  };
}

function statusEvent(
  deployment: Pick<Deployment, 'id' | 'accountId' | 'projectId' | 'serviceId' | 'commitHash'>,
  status: DeploymentStatus,
  previousStatus: DeploymentStatus | null,
  at: Date,
) {
  const event = newEvent<DeploymentStatusChangedEvent>(
    {
      type: 'deployment.status_changed',
      accountId: deployment.accountId,
      projectId: deployment.projectId,
      serviceId: deployment.serviceId,
      deploymentId: deployment.id,
      status,
      previousStatus,
      commitHash: deployment.commitHash,
    },
    at,
  );
  return outboxEntry(TOPICS.deploymentStatusChanged, deployment.id, event);
}

export class DeploymentsRepository {
  constructor(private readonly model: Model<DeploymentDoc>) {}

  /**
   * Inserts a BUILDING deployment with its first status event in its outbox. Returns null when
   * a deployment with this id exists already (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<Deployment | null> {
    const id = fields.id.toHexString();
    const event = statusEvent({ ...fields, id }, 'BUILDING', null, fields.createdAt);
    try {
      const doc = await this.model.create({
        _id: fields.id,
        accountId: fields.accountId,
        projectId: fields.projectId,
        serviceId: fields.serviceId,
        status: 'BUILDING',
        commitHash: fields.commitHash,
        commitMessage: fields.commitMessage,
        createdAt: fields.createdAt,
        statusChangedAt: fields.createdAt,
        outbox: [event],
        outboxPending: true,
      });
      return toDeployment(doc.toObject());
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return null;
      throw err;
    }
  }

  async findById(id: Types.ObjectId): Promise<Deployment | null> {
    const doc = await this.model.findById(id).lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** A deployment only when it belongs to this service of this project and account. */
  async findInService(ref: ServiceRef, id: string): Promise<Deployment | null> {
    const doc = await this.model
      .findOne({ _id: parseObjectId(id, 'Deployment'), ...ref })
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** Newest first; fetches `limit + 1` so the caller knows whether more remain. */
  async listInService(
    ref: ServiceRef,
    limit: number,
    after?: CursorPosition,
  ): Promise<Deployment[]> {
    const filter = after
      ? { ...ref, ...afterCursorFilter(after, (id) => new Types.ObjectId(id)) }
      : { ...ref };
    const docs = await this.model
      .find(filter, { logs: 0, outbox: 0 })
      .sort(NEWEST_FIRST)
      .limit(limit + 1)
      .lean<DeploymentDoc[]>();
    return docs.map(toDeployment);
  }

  /**
   * Moves `current` to `to` only if it is still in `current.status` (and, for the pipeline,
   * still leased to it): a conditional single-document write, so of two racing changes exactly
   * one wins. The status event goes into the outbox in the same update. Null when it lost.
   */
  async transition(
    current: Deployment,
    to: DeploymentStatus,
    options: TransitionOptions = {},
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    const at = new Date();
    const filter: Record<string, unknown> = {
      _id: new Types.ObjectId(current.id),
      status: current.status,
    };
    if (options.leaseOwner) filter.leaseOwner = options.leaseOwner;
    const set: Record<string, unknown> = { ...options.set, status: to, statusChangedAt: at };
    if (to === 'DEPLOYED') set.deployedAt = at;
    const doc = await this.model
      .findOneAndUpdate(
        filter,
        withOutbox({ $set: set }, statusEvent(current, to, current.status, at)),
        {
          new: true,
        },
      )
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  async deleteByProject(accountId: string, projectId: string): Promise<number> {
    const result = await this.model.deleteMany({ accountId, projectId });
    return result.deletedCount;
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<number> {
    const result = await this.model.deleteMany({ accountId, projectId, serviceId });
    return result.deletedCount;
  }
}
