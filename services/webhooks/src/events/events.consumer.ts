import { TOPICS, type DeletionConfirmer, type Logger, type PlatformEvent } from '@platform/shared';
import type { DeploymentCheck } from './deployment-check';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import type { WebhooksService } from '../webhooks/webhooks.service';

export const CONSUMED_TOPICS = [TOPICS.deploymentStatusChanged, TOPICS.projectDeleted];

export interface EventHandlerDeps {
  deliveries: DeliveriesService;
  webhooks: WebhooksService;
  /** The deployments service confirms a status event before it becomes deliveries. */
  deploymentCheck: DeploymentCheck;
  /** The projects service confirms a deletion before anything is deleted. */
  deletions: DeletionConfirmer;
  logger: Logger;
}

/**
 * What the service does with each event (compose hands it to startEventConsumer): a status
 * change becomes deliveries; a deleted project takes its webhooks and their deliveries with it,
 * the deleting account's only. Both only once the owning service confirms them (a message on
 * Kafka alone is not trusted), and both are idempotent.
 */
export function eventHandler(deps: EventHandlerDeps) {
  const ignore = (event: PlatformEvent, why: string) =>
    deps.logger.warn({ type: event.type, eventId: event.eventId }, `event ignored: ${why}`);
  return async (event: PlatformEvent): Promise<void> => {
    if (event.type === 'deployment.status_changed') {
      if (!(await deps.deploymentCheck.confirms(event))) {
        return ignore(event, 'the deployments service does not confirm it');
      }
      await deps.deliveries.recordStatusChange(event);
    } else if (event.type === 'project.deleted') {
      if (!(await deps.deletions.isDeleted(event))) {
        return ignore(event, 'the projects service does not confirm the deletion');
      }
      const deleted = await deps.webhooks.deleteProject(event.accountId, event.projectId);
      if (deleted.webhooks + deleted.deliveries > 0) {
        deps.logger.info({ projectId: event.projectId, ...deleted }, 'deleted project cleaned up');
      }
    }
  };
}
