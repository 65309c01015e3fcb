import { TOPICS, type Logger, type PlatformEvent } from '@platform/shared';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import type { WebhooksService } from '../webhooks/webhooks.service';

export const CONSUMED_TOPICS = [TOPICS.deploymentStatusChanged, TOPICS.projectDeleted];

export interface EventHandlerDeps {
  deliveries: DeliveriesService;
  webhooks: WebhooksService;
  logger: Logger;
}

/**
 * What the service does with each event (compose hands it to startEventConsumer): a status
 * change becomes deliveries; a deleted project takes its webhooks and their deliveries with it.
 * Both are idempotent.
 */
export function eventHandler(deps: EventHandlerDeps) {
  return async (event: PlatformEvent): Promise<void> => {
    if (event.type === 'deployment.status_changed') {
      await deps.deliveries.recordStatusChange(event);
    } else if (event.type === 'project.deleted') {
      const deleted = await deps.webhooks.deleteProject(event.projectId);
      if (deleted.webhooks + deleted.deliveries > 0) {
        deps.logger.info({ projectId: event.projectId, ...deleted }, 'deleted project cleaned up');
      }
    }
  };
}
