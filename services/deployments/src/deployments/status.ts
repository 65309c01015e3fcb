import { conflict, type DeploymentStatus } from '@platform/shared';

export type { DeploymentStatus } from '@platform/shared';

/** The deployment lifecycle (contracts.md): the only transitions there are. */
const NEXT: Record<DeploymentStatus, readonly DeploymentStatus[]> = {
  BUILDING: ['DEPLOYING', 'FAILED', 'CANCELLED'],
  DEPLOYING: ['DEPLOYED', 'FAILED', 'CANCELLED'],
  DEPLOYED: [],
  FAILED: [],
  CANCELLED: [],
};

/** Statuses a pipeline still has work for. */
export const ACTIVE_STATUSES: readonly DeploymentStatus[] = ['BUILDING', 'DEPLOYING'];

export const isFinal = (status: DeploymentStatus): boolean => NEXT[status].length === 0;

export const canTransition = (from: DeploymentStatus, to: DeploymentStatus): boolean =>
  NEXT[from].includes(to);

/** Throws 409 CONFLICT when the lifecycle does not allow `from` → `to`. */
export function assertTransitionAllowed(from: DeploymentStatus, to: DeploymentStatus): void {
  if (!canTransition(from, to)) {
    throw conflict(
      isFinal(from)
        ? `The deployment is already ${from} and can no longer change.`
        : `A deployment cannot go from ${from} to ${to}.`,
    );
  }
}

/** A recorded status change; `from` is null for the creation. */
export interface StatusChange {
  from: DeploymentStatus | null;
  to: DeploymentStatus;
  at: Date;
}

export interface ResolvedStatus {
  status: DeploymentStatus;
  statusChangedAt: Date;
  deployedAt: Date | null;
}

/**
 * The status a deployment is in: BUILDING from its creation, then along the recorded changes,
 * each leaving the status the previous one entered (each status is left at most once).
 */
export function resolveStatus(createdAt: Date, changes: readonly StatusChange[]): ResolvedStatus {
  const leaving = new Map(changes.filter((c) => c.from !== null).map((c) => [c.from, c]));
  let resolved: ResolvedStatus = {
    status: 'BUILDING',
    statusChangedAt: createdAt,
    deployedAt: null,
  };
  for (let next = leaving.get('BUILDING'); next && canTransition(resolved.status, next.to);) {
    resolved = {
      status: next.to,
      statusChangedAt: next.at,
      deployedAt: next.to === 'DEPLOYED' ? next.at : null,
    };
    next = leaving.get(resolved.status);
  }
  return resolved;
}
