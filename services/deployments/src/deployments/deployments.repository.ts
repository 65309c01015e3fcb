import { Types } from 'mongoose';
import {
  NEWEST_FIRST,
  TOPICS,
  afterCursorFilter,
  isDuplicateKeyError,
  newEvent,
  outboxEntry,
  parseObjectId,
  type CursorPosition,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';
import type { DeploymentDoc, DeploymentModels, TransitionDoc } from './deployments.model';
import { assertTransitionAllowed, resolveStatus, type DeploymentStatus } from './status';

/** A deployment as the rest of the service sees it: its status as its transitions give it. */
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

type DeploymentFields = Omit<Deployment, 'status' | 'statusChangedAt' | 'deployedAt'>;

const fieldsOf = (doc: DeploymentDoc): DeploymentFields => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  projectId: doc.projectId,
  serviceId: doc.serviceId,
  commitHash: doc.commitHash,
  commitMessage: doc.commitMessage ?? '',
  logs: doc.logs ?? '',
  createdAt: doc.createdAt,
});

const withStatus = (fields: DeploymentFields, transitions: TransitionDoc[]): Deployment => ({
  ...fields,
  ...resolveStatus(fields.createdAt, transitions),
});

/** The deployment.status-changed event of one change, as a transition document to insert. */
function transitionRecord(
  deployment: Pick<Deployment, 'id' | 'accountId' | 'projectId' | 'serviceId' | 'commitHash'>,
  from: DeploymentStatus | null,
  to: DeploymentStatus,
  at: Date,
  attempt: number | null,
) {
  const event = newEvent<DeploymentStatusChangedEvent>(
    {
      type: 'deployment.status_changed',
      accountId: deployment.accountId,
      projectId: deployment.projectId,
      serviceId: deployment.serviceId,
      deploymentId: deployment.id,
      status: to,
      previousStatus: from,
      commitHash: deployment.commitHash,
    },
    at,
  );
  return {
    deploymentId: deployment.id,
    accountId: deployment.accountId,
    projectId: deployment.projectId,
    serviceId: deployment.serviceId,
    from,
    to,
    at,
    attempt,
    outbox: [outboxEntry(TOPICS.deploymentStatusChanged, deployment.id, event)],
    outboxPending: true,
  };
}

export class DeploymentsRepository {
  constructor(private readonly models: DeploymentModels) {}

  /**
   * Inserts a BUILDING deployment and its creation event. Returns null when a deployment with
   * this id exists already (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<Deployment | null> {
    const doc: DeploymentDoc = {
      _id: fields.id,
      accountId: fields.accountId,
      projectId: fields.projectId,
      serviceId: fields.serviceId,
      commitHash: fields.commitHash,
      commitMessage: fields.commitMessage,
      logs: '',
      createdAt: fields.createdAt,
      status: 'BUILDING',
      statusChangedAt: fields.createdAt,
      deployedAt: null,
      leaseOwner: null,
      leaseUntil: new Date(0),
    };
    try {
      await this.models.deployments.create(doc);
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
    const deployment: Deployment = {
      ...fieldsOf(doc),
      status: 'BUILDING',
      statusChangedAt: doc.createdAt,
      deployedAt: null,
    };
    await this.recordCreation(deployment);
    return deployment;
  }

  /**
   * The creation event, if it is not recorded yet: a crash between the two inserts of
   * insertBuilding leaves a deployment without it, which the next one to look makes good.
   */
  async recordCreation(deployment: Deployment): Promise<void> {
    try {
      await this.models.transitions.create(
        transitionRecord(deployment, null, 'BUILDING', deployment.createdAt, null),
      );
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  async hasCreationRecord(id: string): Promise<boolean> {
    return (await this.models.transitions.exists({ deploymentId: id, from: null })) !== null;
  }

  async findById(id: Types.ObjectId | string): Promise<Deployment | null> {
    const doc = await this.models.deployments.findById(id).lean<DeploymentDoc>();
    return doc ? this.resolve(doc) : null;
  }

  /** A deployment only when it belongs to this service of this project and account. */
  async findInService(ref: ServiceRef, id: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne({ _id: parseObjectId(id, 'Deployment'), ...ref })
      .lean<DeploymentDoc>();
    return doc ? this.resolve(doc) : null;
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
    const docs = await this.models.deployments
      .find(filter, { logs: 0 })
      .sort(NEWEST_FIRST)
      .limit(limit + 1)
      .lean<DeploymentDoc[]>();
    const transitions = await this.transitionsOf(docs.map((d) => d._id.toHexString()));
    return docs.map((doc) =>
      withStatus(fieldsOf(doc), transitions.get(doc._id.toHexString()) ?? []),
    );
  }

  async transitionsOf(ids: string[]): Promise<Map<string, TransitionDoc[]>> {
    const byDeployment = new Map<string, TransitionDoc[]>();
    if (ids.length === 0) return byDeployment;
    const rows = await this.models.transitions
      .find({ deploymentId: { $in: ids } }, { outbox: 0 })
      .lean<TransitionDoc[]>();
    for (const row of rows) {
      byDeployment.set(row.deploymentId, [...(byDeployment.get(row.deploymentId) ?? []), row]);
    }
    return byDeployment;
  }

  /**
   * Records `current` → `to` with its event, only if `current.status` has not been left yet:
   * one insert on the unique (deployment, from) index, so of two racing changes exactly one is
   * recorded. Returns the deployment as it now is, or null when another change won.
   */
  async transition(
    current: Deployment,
    to: DeploymentStatus,
    attempt: number | null = null,
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    const at = new Date();
    try {
      await this.models.transitions.create(
        transitionRecord(current, current.status, to, at, attempt),
      );
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
    return {
      ...current,
      status: to,
      statusChangedAt: at,
      deployedAt: to === 'DEPLOYED' ? at : null,
    };
  }

  async deleteByProject(accountId: string, projectId: string): Promise<number> {
    return this.deleteWhere({ accountId, projectId }, { projectId });
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<number> {
    return this.deleteWhere({ accountId, projectId, serviceId }, { projectId, serviceId });
  }

  private async deleteWhere(
    owned: Partial<ServiceRef>,
    scope: { projectId: string; serviceId?: string },
  ) {
    const result = await this.models.deployments.deleteMany(owned);
    // Leases first: a worker still running one of them finds its lease gone at its next beat.
    await this.models.leases.deleteMany(scope);
    await this.models.transitions.deleteMany({ ...scope, accountId: owned.accountId });
    return result.deletedCount;
  }

  private async resolve(doc: DeploymentDoc): Promise<Deployment> {
    const transitions = await this.transitionsOf([doc._id.toHexString()]);
    return withStatus(fieldsOf(doc), transitions.get(doc._id.toHexString()) ?? []);
  }
}
