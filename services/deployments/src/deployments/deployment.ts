import type { Types } from 'mongoose';
import {
  TOPICS,
  newEvent,
  outboxEntry,
  type DeploymentStatusChangedEvent,
  type OutboxEntry,
} from '@platform/shared';
import { NO_LEASE, type DeploymentDoc } from './deployments.model';
import type { Waiting } from './account-limits';
import { isFinal, type DeploymentStatus } from './status';

/**
 * A deployment as the rest of the service sees it, read from its document, and what a change of
 * its status writes: shapes and pure mappings, no I/O (the repositories do that).
 */
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

/** What a list shows of a deployment: everything but the pipeline's and the outbox's fields. */
export const LIST_FIELDS = {
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
 * The conditional update (libs/shared `transition`) of `current` entering `to` at `at`: from the
 * status it was read in, with the time, `deployedAt` on DEPLOYED, the reason of a cancel nobody
 * asked for, the lease dropped with the last change, and the event.
 */
export function statusChange(
  current: Deployment,
  to: DeploymentStatus,
  at: Date,
  cancelReason?: string,
) {
  return {
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
  };
}

/**
 * Deployments created before this one: earlier, or at the same millisecond with a smaller id, so
 * of any two deployments exactly one is the older (racing triggers never cancel each other).
 */
export const createdBefore = (createdAt: Date, id: Types.ObjectId) => ({
  $or: [{ createdAt: { $lt: createdAt } }, { createdAt, _id: { $lt: id } }],
});

/** The filter of one deployment of this service (of this project, of this account). */
export const inService = (ref: ServiceRef, id: Types.ObjectId) => ({
  _id: id,
  accountId: ref.accountId,
  projectId: ref.projectId,
  serviceId: ref.serviceId,
});
