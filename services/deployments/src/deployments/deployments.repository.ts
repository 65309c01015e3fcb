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
  type OutboxNotifier,
} from '@platform/shared';
import {
  transitionId,
  type DeploymentDoc,
  type DeploymentModels,
  type TransitionDoc,
} from './deployments.model';
import {
  assertTransitionAllowed,
  isFinal,
  resolveStatus,
  type DeploymentStatus,
  type StatusChange,
} from './status';

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

const belongsTo = (doc: DeploymentDoc, ref: ServiceRef) =>
  doc.accountId === ref.accountId &&
  doc.projectId === ref.projectId &&
  doc.serviceId === ref.serviceId;

/** A status change with its deployment.status-changed event, as a document to insert. */
function transitionRecord(
  deployment: Pick<Deployment, 'id' | 'accountId' | 'projectId' | 'serviceId' | 'commitHash'>,
  from: DeploymentStatus | null,
  to: DeploymentStatus,
  at: Date,
  attempt: number | null,
): TransitionDoc {
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
    _id: transitionId(deployment.id, from),
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

/** Inserts; false when the _id exists already. */
async function insertOnce(insert: () => Promise<unknown>): Promise<boolean> {
  try {
    await insert();
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

export class DeploymentsRepository {
  /** `outbox` is told about every status change recorded here (the relay publishes at once). */
  constructor(
    private readonly models: DeploymentModels,
    private readonly outbox: OutboxNotifier,
  ) {}

  /**
   * Inserts a BUILDING deployment, its place in the pipeline's queue and its creation event.
   * Returns null when a deployment with this id exists already (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<Deployment | null> {
    const deployment: Deployment = {
      id: fields.id.toHexString(),
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
    };
    // Queued first: a deployment is never without its way to the pipeline (a queue entry whose
    // deployment never came is dropped by the pipeline).
    await this.enqueue(deployment);
    const inserted = await insertOnce(() =>
      this.models.deployments.create({
        _id: fields.id,
        accountId: deployment.accountId,
        projectId: deployment.projectId,
        serviceId: deployment.serviceId,
        commitHash: deployment.commitHash,
        commitMessage: deployment.commitMessage,
        logs: '',
        createdAt: deployment.createdAt,
      }),
    );
    if (!inserted) return null;
    await this.recordCreation(deployment);
    return deployment;
  }

  /**
   * Makes good what an earlier try of the same request may have left undone when it stopped
   * between its inserts: the queue entry (while there is work) and the creation event.
   */
  async completeCreation(deployment: Deployment): Promise<void> {
    if (!isFinal(deployment.status)) await this.enqueue(deployment);
    if (!(await this.recordCreation(deployment))) {
      // The earlier try may have stopped before telling the relay.
      this.outbox.notify(this.models.transitions, transitionId(deployment.id, null));
    }
  }

  /** The creation event (BUILDING, no previous status), unless it is recorded already. */
  async recordCreation(deployment: Deployment): Promise<boolean> {
    const record = transitionRecord(deployment, null, 'BUILDING', deployment.createdAt, null);
    const recorded = await insertOnce(() => this.models.transitions.create(record));
    if (recorded) this.outbox.notify(this.models.transitions, record._id);
    return recorded;
  }

  async findById(id: Types.ObjectId | string): Promise<Deployment | null> {
    const doc = await this.models.deployments.findById(id).lean<DeploymentDoc>();
    return doc ? this.withStatus(fieldsOf(doc)) : null;
  }

  /** A deployment only when it belongs to this service of this project and account. */
  async findInService(ref: ServiceRef, id: string): Promise<Deployment | null> {
    // By _id alone (the only lookup FerretDB indexes), the owner checked here.
    const doc = await this.models.deployments
      .findById(parseObjectId(id, 'Deployment'))
      .lean<DeploymentDoc>();
    if (!doc || !belongsTo(doc, ref)) return null;
    const deployment = await this.withStatus(fieldsOf(doc));
    // The pipeline writes the logs before each status change, so logs read after the status
    // are at least as new as it; the first read may predate a change that landed meanwhile.
    const latest = await this.models.deployments
      .findById(doc._id, { logs: 1 })
      .lean<Pick<DeploymentDoc, 'logs'>>();
    return { ...deployment, logs: latest?.logs ?? deployment.logs };
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
    return Promise.all(docs.map((doc) => this.withStatus(fieldsOf(doc))));
  }

  /**
   * Records `current` → `to` with its event, only if `current.status` has not been left yet:
   * one insert whose _id is the status left, so of two racing changes exactly one is recorded.
   * Returns the deployment as it now is, or null when another change won.
   */
  async transition(
    current: Deployment,
    to: DeploymentStatus,
    attempt: number | null = null,
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    const at = new Date();
    const record = transitionRecord(current, current.status, to, at, attempt);
    const recorded = await insertOnce(() => this.models.transitions.create(record));
    if (!recorded) return null;
    this.outbox.notify(this.models.transitions, record._id);
    return {
      ...current,
      status: to,
      statusChangedAt: at,
      deployedAt: to === 'DEPLOYED' ? at : null,
    };
  }

  /** Nothing left for the pipeline to run. */
  async dequeue(id: string): Promise<void> {
    await this.models.queue.deleteOne({ _id: id });
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
    await this.models.queue.deleteMany(scope);
    // A worker still running one of them finds its lease gone at its next heartbeat and stops.
    await this.models.leases.deleteMany(scope);
    await this.models.transitions.deleteMany({ ...scope, accountId: owned.accountId });
    // Last, so a deployment that is gone has nothing left behind.
    const result = await this.models.deployments.deleteMany(owned);
    return result.deletedCount;
  }

  private async enqueue(d: Pick<Deployment, 'id' | 'projectId' | 'serviceId' | 'createdAt'>) {
    await insertOnce(() =>
      this.models.queue.create({
        _id: d.id,
        projectId: d.projectId,
        serviceId: d.serviceId,
        createdAt: d.createdAt,
      }),
    );
  }

  /** Follows the transitions from BUILDING, by _id: at most three reads. */
  private async withStatus(fields: DeploymentFields): Promise<Deployment> {
    const changes: StatusChange[] = [];
    for (let from: DeploymentStatus = 'BUILDING'; ;) {
      const change: TransitionDoc | null = await this.models.transitions
        .findById(transitionId(fields.id, from), { from: 1, to: 1, at: 1 })
        .lean<TransitionDoc>();
      if (!change) break;
      changes.push(change);
      if (isFinal(change.to)) break;
      from = change.to;
    }
    return { ...fields, ...resolveStatus(fields.createdAt, changes) };
  }
}
