import { TOPICS, type DeletionConfirmer, type Logger, type PlatformEvent } from '@platform/shared';
import type { DeploymentsService } from '../deployments/deployments.service';

/** What the service's consumer reads (compose.ts starts it with eventHandler). */
export const CONSUMED_TOPICS = [TOPICS.projectDeleted, TOPICS.serviceDeleted];

/**
 * A deleted project or service takes its deployments with it. Reads are already 404 (the
 * ownership check); this removes the documents, and a pipeline still running one of them stops
 * at its next heartbeat when the document is gone. Only once the projects service confirms the
 * deletion, and only the deleting account's: a message naming a live project deletes nothing.
 */
export function eventHandler(
  service: DeploymentsService,
  deletions: DeletionConfirmer,
  logger: Logger,
) {
  const log = logger.child({ component: 'cleanup' });
  return async (event: PlatformEvent): Promise<void> => {
    if (event.type !== 'project.deleted' && event.type !== 'service.deleted') return;
    if (!(await deletions.isDeleted(event))) {
      log.warn(
        { type: event.type, eventId: event.eventId, projectId: event.projectId },
        'ignored a deletion the projects service does not confirm',
      );
      return;
    }
    if (event.type === 'project.deleted') {
      const removed = await service.removeProjectDeployments(event.accountId, event.projectId);
      log.info(
        { projectId: event.projectId, removed },
        'removed the deleted project’s deployments',
      );
    } else if (event.type === 'service.deleted') {
      const removed = await service.removeServiceDeployments(
        event.accountId,
        event.projectId,
        event.serviceId,
      );
      log.info(
        { serviceId: event.serviceId, removed },
        'removed the deleted service’s deployments',
      );
    }
  };
}
