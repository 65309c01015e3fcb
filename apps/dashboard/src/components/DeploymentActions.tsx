import { useDeploymentActions } from '../lib/deployment-actions';
import { ErrorNotice } from './ErrorView';
import { isFinal, type DeploymentStatus } from './Status';

/** The actions the API allows on a deployment in its state; 409s shown beside them. */
export function DeploymentActions({
  path,
  status,
  reachedDeployed,
  label,
}: {
  path: { projectId: string; serviceId: string; deploymentId: string };
  status: DeploymentStatus;
  reachedDeployed: boolean;
  /** Names the deployment for screen readers (several rows have the same buttons). */
  label: string;
}) {
  const { cancel, redeploy, rollback, error } = useDeploymentActions(path);
  return (
    <span className="actions">
      {!isFinal(status) && (
        <button type="button" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
          Cancel <span className="sr-only">{label}</span>
        </button>
      )}
      <button type="button" disabled={redeploy.isPending} onClick={() => redeploy.mutate()}>
        Redeploy <span className="sr-only">{label}</span>
      </button>
      {reachedDeployed && (
        <button type="button" disabled={rollback.isPending} onClick={() => rollback.mutate()}>
          Roll back to this <span className="sr-only">{label}</span>
        </button>
      )}
      <ErrorNotice error={error} />
    </span>
  );
}
