import type { Kafka } from 'kafkajs';
import type { Connection } from 'mongoose';
import {
  TOPICS,
  mongoProcessedEvents,
  startEventConsumer,
  type EventConsumer,
  type Logger,
  type PlatformEvent,
} from '@platform/shared';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import type { WebhooksRepository } from '../webhooks/webhooks.repository';

export const CONSUMED_TOPICS = [TOPICS.deploymentStatusChanged, TOPICS.projectDeleted];

const PRUNE_EVERY_MS = 60 * 60_000;
const REMEMBER_EVENTS_MS = 7 * 24 * 60 * 60_000;

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

/** Joins the consumer group and prunes the processed-event ids now and then (no TTL indexes). */
export async function startWebhookConsumer(
  options: WebhookConsumerOptions,
): Promise<EventConsumer> {
  const processed = mongoProcessedEvents(options.connection, 'webhooks');
  const consumer = await startEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: CONSUMED_TOPICS,
    logger: options.logger,
    processed,
    fromBeginning: options.fromBeginning,
    handle: webhookEventHandler(options),
  });
  const prune = () =>
    processed.prune(new Date(Date.now() - REMEMBER_EVENTS_MS)).catch((err: unknown) => {
      options.logger.warn({ err }, 'pruning processed events failed');
    });
  const timer = setInterval(prune, PRUNE_EVERY_MS);
  timer.unref();
  return {
    consumer: consumer.consumer,
    stop: async () => {
      clearInterval(timer);
      await consumer.stop();
    },
  };
}
