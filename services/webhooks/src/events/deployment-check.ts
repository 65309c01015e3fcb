import {
  DEPLOYMENT_STAGE as STAGE,
  createInternalClient,
  type DeploymentStatus,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';

/** What the deployments service says of one of its deployments (GET /internal/deployments/:id). */
interface DeploymentRecord {
  accountId: string;
  projectId: string;
  serviceId: string;
  deploymentId: string;
  commitHash: string;
  status: DeploymentStatus;
}

/**
 * Checks a status event against the deployments service's own record before a webhook is signed
 * and sent of it (contracts.md "Trust inside the platform"): asked as the event's account, the
 * deployment must exist, belong to the event's project and service, have its commit, and be in
 * the event's status or past it (a final status exactly). A forged event, or one about another
 * account's deployment, is not confirmed. Projects or deployments not answering throws, so the
 * consumer retries the event later.
 */
export function deploymentCheck(config: { DEPLOYMENTS_URL: string; INTERNAL_SECRET: string }) {
  const deployments = createInternalClient({
    baseUrl: config.DEPLOYMENTS_URL,
    service: 'deployments',
    internalSecret: config.INTERNAL_SECRET,
  });
  return {
    async confirms(event: DeploymentStatusChangedEvent): Promise<boolean> {
      const record = await deployments.findJson<DeploymentRecord>(
        `/internal/deployments/${encodeURIComponent(event.deploymentId)}`,
        { accountId: event.accountId },
      );
      if (!record) return false;
      const final = STAGE[event.status] === 2;
      return (
        record.accountId === event.accountId &&
        record.projectId === event.projectId &&
        record.serviceId === event.serviceId &&
        record.commitHash === event.commitHash &&
        (final ? record.status === event.status : STAGE[record.status] >= STAGE[event.status])
      );
    },
  };
}

export type DeploymentCheck = ReturnType<typeof deploymentCheck>;
