import {
  Scheduler,
  createSecretBox,
  deletionConfirmer,
  requireOwnership,
  openDatabase,
  openKafka,
  startServiceConsumer,
  type Runtime,
} from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorker } from './deliveries/delivery-worker';
import { EgressGuard, type ResolveHost } from './egress/egress-guard';
import { deploymentCheck } from './events/deployment-check';
import { CONSUMED_TOPICS, eventHandler } from './events/events.consumer';
import { createModels } from './models';
import { SecretUnreadableError, WebhookSecrets } from './webhooks/webhook-secrets';
import { WebhooksRepository } from './webhooks/webhooks.repository';
import { WebhooksService } from './webhooks/webhooks.service';

/** What cannot be configuration, replaced only by tests. */
export interface Seams {
  /** Name resolution for the egress guard: tests answer from a table, never from real DNS. */
  resolveHost?: ResolveHost;
}

/**
 * The composition root, the same for main.ts (through runService) and for the tests: opens the
 * database, the delivery worker, the housekeeping and the Kafka consumer, each registering its
 * closer as it opens, and builds the HTTP app.
 */
export async function compose(config: Config, runtime: Runtime, seams: Seams = {}) {
  const { logger, lifecycle } = runtime;
  const secrets = new WebhookSecrets(createSecretBox(config));
  const { connection, models } = await openDatabase(config, runtime, createModels);

  const webhooksRepository = new WebhooksRepository(models.webhooks, models.webhookQuotas);
  const deliveriesRepository = new DeliveriesRepository(models.deliveries);
  if (config.WEBHOOK_ALLOW_PRIVATE) logger.warn('deliveries may reach private addresses');
  const guard = new EgressGuard({
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    resolveHost: seams.resolveHost,
  });
  const worker = new DeliveryWorker({
    deliveries: deliveriesRepository,
    webhooks: webhooksRepository,
    guard,
    secrets,
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.DELIVERY_CONCURRENCY,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    pollIntervalMs: config.DELIVERY_POLL_INTERVAL,
    inOrderWindowMs: config.DELIVERY_IN_ORDER_WINDOW,
    stopGraceMs: config.DELIVERY_STOP_GRACE,
    logger,
  });
  const deliveries = new DeliveriesService({
    deliveries: deliveriesRepository,
    webhooks: webhooksRepository,
    dispatcher: worker,
    retentionMs: config.WEBHOOK_DELIVERY_RETENTION,
  });
  const webhooks = new WebhooksService({
    webhooks: webhooksRepository,
    deliveries: deliveriesRepository,
    guard,
    secrets,
    secretOverlapMs: config.WEBHOOK_SECRET_OVERLAP,
  });
  if (config.DELIVERY_WORKER) worker.start();
  lifecycle.onShutdown('delivery worker', () => worker.stop());

  const scheduler = new Scheduler(logger);
  lifecycle.onShutdown('housekeeping', () => scheduler.stop());
  scheduler.every({
    name: 'delete finished deliveries past retention',
    everyMs: config.DELIVERY_HOUSEKEEPING_INTERVAL,
    runAtStart: true,
    run: async () => {
      const deleted = await deliveries.deleteExpired();
      if (deleted > 0) logger.info({ deleted }, 'finished deliveries past retention deleted');
    },
  });
  scheduler.every({
    name: 'seal webhook secrets under ENCRYPTION_KEY',
    everyMs: config.DELIVERY_HOUSEKEEPING_INTERVAL,
    runAtStart: true,
    run: async () => {
      try {
        const { resealed } = await webhooks.resealSecrets();
        if (resealed > 0) logger.info({ resealed }, 'webhook secrets sealed under ENCRYPTION_KEY');
      } catch (err) {
        // Deliveries to these webhooks fail until the key that opens them is configured.
        if (!(err instanceof SecretUnreadableError)) throw err;
        logger.error({ err, webhookIds: err.webhookIds }, 'webhook secrets do not open');
      }
    },
  });

  const kafka = await openKafka(config, runtime, 'webhooks');
  await startServiceConsumer(config, runtime, {
    kafka,
    connection,
    topics: CONSUMED_TOPICS,
    handle: eventHandler({
      deliveries,
      webhooks,
      deploymentCheck: deploymentCheck(config),
      deletions: deletionConfirmer(config),
      logger,
    }),
  });

  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    requireProject: requireOwnership(config, 'project'),
    webhooks,
    deliveries,
  });
  return { app, models, worker, deliveries, webhooks, connection };
}

export type Composed = Awaited<ReturnType<typeof compose>>;
