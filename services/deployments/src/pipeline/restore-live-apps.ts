import type { Logger } from '@platform/shared';
import type { DeploymentsRepository } from '../deployments/deployments.repository';
import type { Models } from '../models';
import type { LocalSteps } from './steps';

/**
 * The services that have a deployment DEPLOYED, one entry each: read from the index
 * `{status, serviceId}` alone (one key per service on MongoDB, its DISTINCT_SCAN), not from
 * every DEPLOYED deployment ever.
 */
export const liveServicesPipeline = () => [
  { $match: { status: 'DEPLOYED' } },
  { $group: { _id: '$serviceId' } },
];

/**
 * Re-adoption at start: the supervisor outlives this service, so its apps are usually still
 * serving; when it did not (the machine restarted), each service's live deployment (its newest
 * DEPLOYED one) is started again from its kept build, and its log says so. A deploy of the
 * service running meanwhile wins: the runtime never lets an older deployment replace a newer
 * one (promotion.ts), so the restore's read of the live deployment may be stale.
 */
export async function restoreLiveApps(
  repository: DeploymentsRepository,
  models: Models,
  steps: LocalSteps,
  logger: Logger,
): Promise<void> {
  const services = await models.deployments.aggregate<{ _id: string }>(liveServicesPipeline());
  for (const { _id: serviceId } of services) {
    const live = await repository.latestDeployed(serviceId);
    if (!live) continue;
    try {
      const releaseLog = await steps.restore(live, (reason) =>
        logger.warn({ deploymentId: live.id, reason }, 'could not restore a deployed app'),
      );
      if (!releaseLog) continue;
      await repository.logs.append(
        live.id,
        '==> the runtime had stopped: this deployment was started again from its build\n',
        { set: { release: { id: releaseLog.releaseId, offset: releaseLog.offset } } },
      );
      logger.info({ deploymentId: live.id, serviceId }, 'restored a deployed app from its build');
    } catch (err) {
      logger.warn({ err: (err as Error).message, deploymentId: live.id }, 'restoring failed');
    }
  }
}
