/**
 * The verdicts the runner reads off the cluster's objects: a release's rollout from its
 * Deployment (releases.ts), a build's end from its Job (builds.ts).
 */

/** Where a deployment stands, read off its Kubernetes objects. */
export type RolloutOutcome = 'DEPLOYING' | 'DEPLOYED' | 'FAILED';

interface DeploymentStatusView {
  metadata: { generation?: number };
  spec: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/**
 * The release's rollout, as `kubectl rollout status` reads it: DEPLOYED once the controller has
 * seen this generation and every replica is the new one and available (no old pod left);
 * FAILED when the progress deadline (the health-check timeout) passed; DEPLOYING otherwise.
 */
export function rolloutOutcome(deployment: DeploymentStatusView): RolloutOutcome {
  const status = deployment.status ?? {};
  const wanted = deployment.spec.replicas ?? 1;
  if ((status.observedGeneration ?? 0) < (deployment.metadata.generation ?? 1)) return 'DEPLOYING';
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return 'FAILED';
  }
  const done =
    (status.updatedReplicas ?? 0) === wanted &&
    (status.availableReplicas ?? 0) >= wanted &&
    (status.replicas ?? 0) === wanted;
  return done ? 'DEPLOYED' : 'DEPLOYING';
}

/** A build Job's outcome: running until it completes or fails (a timeout is a failure). */
export function buildOutcome(job: {
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}): { state: 'running' | 'succeeded' | 'failed'; reason?: string } {
  const conditions = job.status?.conditions ?? [];
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  if (holds('Complete')) return { state: 'succeeded' };
  const failed = holds('Failed');
  if (failed) return { state: 'failed', reason: failed.reason ?? 'Failed' };
  return { state: 'running' };
}
