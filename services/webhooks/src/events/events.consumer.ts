import type { Kafka } from 'kafkajs';
import type { Connection } from 'mongoose';
import {
  TOPICS,
  startEventConsumer,
  type EventConsumer,
  type Logger,
  type PlatformEvent,
} from '@platform/shared';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import type { WebhooksRepository } from '../webhooks/webhooks.repository';

export const CONSUMED_TOPICS = [TOPICS.deploymentStatusChanged, TOPICS.projectDeleted];

export interface WebhookEventHandlerDeps {
  deliveries: DeliveriesService;
  webhooksRepository: WebhooksRepository;
  deliveriesRepository: DeliveriesRepository;
  logger: Logger;
}

/**
 * What the service does with each event: a status change becomes deliveries; a deleted
 * project takes its webhooks and their deliveries with it. Both are idempotent.
 */
export function webhookEventHandler(deps: WebhookEventHandlerDeps) {
  return async (event: PlatformEvent): Promise<void> => {
    if (event.type === 'deployment.status_changed') {
      await deps.deliveries.recordStatusChange(event);
    } else if (event.type === 'project.deleted') {
      const webhooks = await deps.webhooksRepository.deleteInProject(event.projectId);
      const deliveries = await deps.deliveriesRepository.deleteInProject(event.projectId);
      if (webhooks + deliveries > 0) {
        deps.logger.info(
          { projectId: event.projectId, webhooks, deliveries },
          'deleted project cleaned up',
        );
      }
    }
  };
}

export interface WebhookConsumerOptions extends WebhookEventHandlerDeps {
  kafka: Kafka;
  groupId: string;
  connection: Connection;
  /** Where a brand-new group starts (default: the beginning, so no event is lost). */
  fromBeginning?: boolean;
}

/** Joins the consumer group (startEventConsumer also prunes the handled event ids). */
export function startWebhookConsumer(options: WebhookConsumerOptions): Promise<EventConsumer> {
  return startEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: CONSUMED_TOPICS,
    logger: options.logger,
    connection: options.connection,
    fromBeginning: options.fromBeginning,
    handle: webhookEventHandler(options),
  });
}
