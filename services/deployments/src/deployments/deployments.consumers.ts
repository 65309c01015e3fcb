import type { Kafka } from 'kafkajs';
import type { Connection } from 'mongoose';
import {
  TOPICS,
  startEventConsumer,
  type EventConsumer,
  type Logger,
  type PlatformEvent,
} from '@platform/shared';
import type { DeploymentsService } from './deployments.service';

export interface CleanupConsumerOptions {
  kafka: Kafka;
  connection: Connection;
  groupId: string;
  logger: Logger;
  service: DeploymentsService;
  /** Where a new group starts; default true, so no deletion is ever missed. */
  fromBeginning?: boolean;
}

/**
 * A deleted project or service takes its deployments with it. Reads are already 404 (the
 * ownership check); this removes the documents, and a pipeline still running one of them stops
 * at its next heartbeat when the document is gone.
 */
export function startCleanupConsumer(options: CleanupConsumerOptions): Promise<EventConsumer> {
  const log = options.logger.child({ component: 'cleanup' });
  return startEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [TOPICS.projectDeleted, TOPICS.serviceDeleted],
    logger: options.logger,
    connection: options.connection,
    fromBeginning: options.fromBeginning,
    handle: async (event: PlatformEvent) => {
      if (event.type === 'project.deleted') {
        const removed = await options.service.removeProjectDeployments(
          event.accountId,
          event.projectId,
        );
        log.info(
          { projectId: event.projectId, removed },
          'removed the deleted project’s deployments',
        );
      } else if (event.type === 'service.deleted') {
        const removed = await options.service.removeServiceDeployments(
          event.accountId,
          event.projectId,
          event.serviceId,
        );
        log.info(
          { serviceId: event.serviceId, removed },
          'removed the deleted service’s deployments',
        );
      }
    },
  });
}
