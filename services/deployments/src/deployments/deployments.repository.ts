import type { Types } from 'mongoose';
import {
  TOPICS,
  findPage,
  insertOnce,
  mapPage,
  newEvent,
  outboxEntry,
  parseObjectId,
  transition,
  type DeploymentStatusChangedEvent,
  type OutboxEntry,
  type OutboxWriter,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { Models } from '../models';
import { NO_LEASE, type DeploymentDoc } from './deployments.model';
import { LogStore } from './log-store';
import type { Waiting } from './account-limits';
import { ACTIVE_STATUSES, assertTransitionAllowed, isFinal, type DeploymentStatus } from './status';

/** A deployment as the rest of the service sees it. */
export interface Deployment {
  id: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  status: DeploymentStatus;
  commitHash: string;
  commitMessage: string;
  createdAt: Date;
  statusChangedAt: Date;
  deployedAt: Date | null;
  /** Why it was cancelled when its owner did not cancel it (`superseded by <id>`). */
  cancelReason: string | null;
  /** Until when a worker holds it (in the past: nobody does). */
  leaseUntil: Date;
  /** Still to build, nobody running it, held back by its account's limits: why (the API's). */
  waiting?: Waiting;
}

/** With its output: what a single read answers. */
export type DeploymentWithLogs = Deployment & { logs: string };

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

/** What a list shows of a deployment: everything but the pipeline's and the outbox's fields. */
const LIST_FIELDS = {
  accountId: 1,
  projectId: 1,
  serviceId: 1,
  status: 1,
  commitHash: 1,
  commitMessage: 1,
  createdAt: 1,
  statusChangedAt: 1,
  deployedAt: 1,
  cancelReason: 1,
  leaseUntil: 1,
} as const;

export const toDeployment = (doc: DeploymentDoc): Deployment => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  projectId: doc.projectId,
  serviceId: doc.serviceId,
  status: doc.status,
  commitHash: doc.commitHash,
  commitMessage: doc.commitMessage ?? '',
  createdAt: doc.createdAt,
  statusChangedAt: doc.statusChangedAt,
  deployedAt: doc.deployedAt ?? null,
  cancelReason: doc.cancelReason ?? null,
  leaseUntil: doc.leaseUntil,
});

/** The deployment.status-changed event of `deployment` entering `to`, for its outbox. */
export function statusEvent(
  deployment: Pick<Deployment, 'id' | 'accountId' | 'projectId' | 'serviceId' | 'commitHash'>,
  to: DeploymentStatus,
  previous: DeploymentStatus | null,
  at: Date,
): OutboxEntry {
  const event = newEvent<DeploymentStatusChangedEvent>(
    {
      type: 'deployment.status_changed',
      accountId: deployment.accountId,
      projectId: deployment.projectId,
      serviceId: deployment.serviceId,
      deploymentId: deployment.id,
      status: to,
      previousStatus: previous,
      commitHash: deployment.commitHash,
    },
    at,
  );
  return outboxEntry(TOPICS.deploymentStatusChanged, deployment.id, event);
}

/**
 * Deployments created before this one: earlier, or at the same millisecond with a smaller id, so
 * of any two deployments exactly one is the older (racing triggers never cancel each other).
 */
export const createdBefore = (createdAt: Date, id: Types.ObjectId) => ({
  $or: [{ createdAt: { $lt: createdAt } }, { createdAt, _id: { $lt: id } }],
});

/** The filter of one deployment of this service (of this project, of this account). */
const inService = (ref: ServiceRef, id: Types.ObjectId) => ({
  _id: id,
  accountId: ref.accountId,
  projectId: ref.projectId,
  serviceId: ref.serviceId,
});

export class DeploymentsRepository {
  readonly logs: LogStore;

  /** Status events are written through `outbox` (the relay publishes them at once). */
  constructor(
    private readonly models: Models,
    private readonly outbox: OutboxWriter,
    logLimitBytes?: number,
  ) {
    this.logs = new LogStore(models, logLimitBytes);
  }

  /**
   * Inserts a BUILDING deployment with its creation event in its outbox: one insert. Returns
   * false when a deployment with this id exists already (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<boolean> {
    const deployment: Deployment = {
      id: fields.id.toHexString(),
      accountId: fields.accountId,
      projectId: fields.projectId,
      serviceId: fields.serviceId,
      status: 'BUILDING',
      commitHash: fields.commitHash,
      commitMessage: fields.commitMessage,
      createdAt: fields.createdAt,
      statusChangedAt: fields.createdAt,
      deployedAt: null,
      cancelReason: null,
      leaseUntil: NO_LEASE,
    };
    const entry = statusEvent(deployment, 'BUILDING', null, fields.createdAt);
    return this.outbox.write(this.models.deployments, fields.id, () =>
      insertOnce(
        this.models.deployments.create({
          _id: fields.id,
          accountId: deployment.accountId,
          projectId: deployment.projectId,
          serviceId: deployment.serviceId,
          commitHash: deployment.commitHash,
          commitMessage: deployment.commitMessage,
          status: 'BUILDING',
          createdAt: deployment.createdAt,
          statusChangedAt: deployment.createdAt,
          deployedAt: null,
          leaseOwner: null,
          leaseUntil: NO_LEASE,
          attempts: 0,
          handedBack: 0,
          claimedAt: null,
          cancelReason: null,
          outbox: [entry],
          outboxPending: true,
        }),
      ),
    );
  }

  /** A deployment with its logs, only when it belongs to this service of this project and account. */
  async findInService(ref: ServiceRef, id: string): Promise<DeploymentWithLogs | null> {
    const _id = parseObjectId(id, 'Deployment');
    const [doc, logs] = await Promise.all([
      this.models.deployments.findOne(inService(ref, _id), LIST_FIELDS).lean<DeploymentDoc>(),
      this.logsOf(ref, id),
    ]);
    return doc ? { ...toDeployment(doc), logs } : null;
  }

  /** The service's deployments newest first, `limit` at a time, optionally of some statuses. */
  async listInService(
    ref: ServiceRef,
    page: PageRequest,
    statuses?: readonly DeploymentStatus[],
  ): Promise<Page<Deployment>> {
    return mapPage(
      await findPage(this.models.deployments, this.listFilter(ref, statuses), page, LIST_FIELDS),
      toDeployment,
    );
  }

  /** A list's filter (exposed so the conformance suite can check the index that serves it). */
  listFilter(ref: ServiceRef, statuses?: readonly DeploymentStatus[]) {
    return {
      serviceId: ref.serviceId,
      accountId: ref.accountId,
      projectId: ref.projectId,
      ...(statuses && { status: { $in: [...statuses] } }),
    };
  }

  /** The deployment alone, when it belongs to the account (null for another's; 404 if malformed). */
  async findOfAccount(accountId: string, id: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne({ _id: parseObjectId(id, 'Deployment'), accountId }, LIST_FIELDS)
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** The deployment alone (no logs), when it belongs to this service. */
  async find(ref: ServiceRef, id: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne(inService(ref, parseObjectId(id, 'Deployment')), LIST_FIELDS)
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  async logsOf(ref: ServiceRef, id: string): Promise<string> {
    // Keyed by the id as the pipeline writes it (lower case), whatever case the URL used.
    return this.logs.read(parseObjectId(id, 'Deployment').toHexString(), ref.accountId);
  }

  /**
   * Moves `current` to `to` with its event, if it is still in the status it was read in (and,
   * for the pipeline, still held by `lease`): one conditional update, so of racing changes
   * exactly one is written. Null when another change came first, or the deployment is gone.
   */
  async changeStatus(
    current: Deployment,
    to: DeploymentStatus,
    lease?: { owner: string; attempt: number },
    cancelReason?: string,
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    const id = parseObjectId(current.id, 'Deployment');
    const at = new Date();
    const doc = await this.outbox.write(this.models.deployments, id, () =>
      transition(this.models.deployments, {
        where: {
          ...inService(current, id),
          ...(lease && { leaseOwner: lease.owner, attempts: lease.attempt }),
        },
        from: [current.status],
        to,
        set: {
          statusChangedAt: at,
          ...(to === 'DEPLOYED' && { deployedAt: at }),
          ...(cancelReason && { cancelReason }),
          // Nothing more to run: the lease goes with the last change.
          ...(isFinal(to) && { leaseOwner: null, leaseUntil: NO_LEASE }),
        },
        events: [statusEvent(current, to, current.status, at)],
      }),
    );
    return doc ? toDeployment(doc) : null;
  }

  /**
   * Newest wins (contracts.md): cancels the service's deployments still BUILDING that are older
   * than its newest one still running (BUILDING or DEPLOYING), each with `superseded by <that
   * one's id>`. Called after every insert: racing triggers insert in any order, and whichever
   * runs last sees every one of them, so exactly the newest is left. Those running stop at their
   * worker's next heartbeat and log it; one no worker holds gets the line in its log here.
   * Returns the ones it cancelled.
   */
  async supersedeOlder(ref: ServiceRef): Promise<Deployment[]> {
    const [newest] = await this.models.deployments
      .find(
        {
          serviceId: ref.serviceId,
          accountId: ref.accountId,
          projectId: ref.projectId,
          status: { $in: [...ACTIVE_STATUSES] },
        },
        LIST_FIELDS,
      )
      .sort({ createdAt: -1, _id: -1 })
      .limit(1)
      .lean<DeploymentDoc[]>();
    if (!newest) return [];
    const older = await this.models.deployments
      .find(
        {
          serviceId: ref.serviceId,
          accountId: ref.accountId,
          projectId: ref.projectId,
          status: 'BUILDING',
          ...createdBefore(newest.createdAt, newest._id),
        },
        LIST_FIELDS,
      )
      .lean<DeploymentDoc[]>();
    const reason = `superseded by ${newest._id.toHexString()}`;
    const cancelled: Deployment[] = [];
    for (const doc of older) {
      const done = await this.changeStatus(toDeployment(doc), 'CANCELLED', undefined, reason);
      if (!done) continue;
      cancelled.push(done);
      // Held by nobody: no worker will write its log, so the reason is written here.
      if (doc.leaseUntil.getTime() <= Date.now()) {
        await this.logs.create({ ...done, deploymentId: done.id });
        await this.logs.append(done.id, `Deployment cancelled: ${reason}.\n`);
      }
    }
    return cancelled;
  }

  /**
   * The service's newest DEPLOYED deployment: the one its URL serves (newest wins, in the
   * runtime too). Read from the index `{serviceId, status, createdAt, _id}` in its order.
   */
  async latestDeployed(serviceId: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne({ serviceId, status: 'DEPLOYED' }, LIST_FIELDS)
      .sort({ createdAt: -1, _id: -1 })
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** The services of a project that have deployments here. */
  async serviceIdsOf(accountId: string, projectId: string): Promise<string[]> {
    return (await this.models.deployments.distinct('serviceId', { accountId, projectId })).map(
      String,
    );
  }

  async deleteByProject(accountId: string, projectId: string): Promise<number> {
    const result = await this.models.deployments.deleteMany({ accountId, projectId });
    await this.logs.deleteOf({ accountId, projectId });
    return result.deletedCount;
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<number> {
    const result = await this.models.deployments.deleteMany({ serviceId, accountId, projectId });
    await this.logs.deleteOf({ accountId, projectId, serviceId });
    return result.deletedCount;
  }
}
