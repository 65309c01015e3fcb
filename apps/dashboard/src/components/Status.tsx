import type { Schemas } from '../api/client';

export type DeploymentStatus = Schemas['Deployment']['status'];
export const FINAL_STATUSES: DeploymentStatus[] = ['DEPLOYED', 'FAILED', 'CANCELLED'];
export const isFinal = (status: DeploymentStatus) => FINAL_STATUSES.includes(status);

/** A deployment's status as a labelled badge (colour is never the only sign: the word is there). */
export function StatusBadge({ status }: { status: DeploymentStatus }) {
  return <span className={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}
