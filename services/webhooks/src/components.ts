import type { Connection } from 'mongoose';
import { syncIndexes, type Logger } from '@platform/shared';
import { deliveryModel } from './deliveries/deliveries.model';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorker } from './deliveries/delivery-worker';
import { EgressGuard, type ResolveHost } from './egress/egress-guard';
import { webhookModel } from './webhooks/webhooks.model';
import { WebhooksRepository } from './webhooks/webhooks.repository';
import { WebhooksService } from './webhooks/webhooks.service';

export interface ComponentOptions {
  connection: Connection;
  logger: Logger;
  allowPrivate: boolean;
  retrySchedule: number[];
  timeoutMs: number;
  concurrency: number;
  disableAfterMs: number;
  retentionMs: number;
  pollIntervalMs?: number;
  housekeepingIntervalMs?: number;
  stopGraceMs?: number;
  inOrderWindowMs?: number;
  /** Tests resolve names without DNS; production uses the system resolver. */
  resolveHost?: ResolveHost;
}

export type Components = ReturnType<typeof createComponents>;

/** Builds the repositories, services and worker of one process over one database. */
export function createComponents(options: ComponentOptions) {
  const webhooksRepository = new WebhooksRepository(webhookModel(options.connection));
  const deliveriesRepository = new DeliveriesRepository(deliveryModel(options.connection));
  const guard = new EgressGuard({
    allowPrivate: options.allowPrivate,
    resolveHost: options.resolveHost,
  });
  const worker = new DeliveryWorker({
    deliveries: deliveriesRepository,
    webhooks: webhooksRepository,
    guard,
    retrySchedule: options.retrySchedule,
    timeoutMs: options.timeoutMs,
    concurrency: options.concurrency,
    disableAfterMs: options.disableAfterMs,
    retentionMs: options.retentionMs,
    housekeepingIntervalMs: options.housekeepingIntervalMs,
    pollIntervalMs: options.pollIntervalMs,
    stopGraceMs: options.stopGraceMs,
    inOrderWindowMs: options.inOrderWindowMs,
    logger: options.logger,
  });
  const deliveries = new DeliveriesService({
    deliveries: deliveriesRepository,
    webhooks: webhooksRepository,
    dispatcher: worker,
  });
  const webhooks = new WebhooksService({
    webhooks: webhooksRepository,
    deliveries: deliveriesRepository,
    guard,
  });
  return { webhooksRepository, deliveriesRepository, guard, worker, deliveries, webhooks };
}

/** Every index the queries need; run at start-up (autoIndex is off). */
export async function syncAllIndexes(
  connection: Connection,
  components: Components,
): Promise<void> {
  await syncIndexes([components.webhooksRepository.model, components.deliveriesRepository.model]);
}
