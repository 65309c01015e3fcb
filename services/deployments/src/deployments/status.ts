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

/** The 409 CONFLICT of a change from `from` to `to` the lifecycle does not allow. */
export const transitionRefused = (from: DeploymentStatus, to: DeploymentStatus) =>
  conflict(
    isFinal(from)
      ? `The deployment is already ${from} and can no longer change.`
      : `A deployment cannot go from ${from} to ${to}.`,
  );

/** Throws 409 CONFLICT when the lifecycle does not allow `from` → `to`. */
export function assertTransitionAllowed(from: DeploymentStatus, to: DeploymentStatus): void {
  if (!canTransition(from, to)) throw transitionRefused(from, to);
}
