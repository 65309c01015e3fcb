import { createServer } from 'node:http';
import {
  Lifecycle,
  closeHttpServer,
  connectMongo,
  createInternalClient,
  createKafka,
  createLogger,
  ensureTopics,
  loadConfig,
} from '@platform/shared';
import { createApp } from './app';
import { createComponents, syncAllIndexes } from './components';
import { configSchema } from './config';
import { startWebhookConsumer } from './events/events.consumer';

async function main() {
  const config = loadConfig(configSchema);
  const logger = createLogger('webhooks', config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, 25_000);
  lifecycle.handleSignals();

  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const components = createComponents({
    connection,
    logger,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.DELIVERY_CONCURRENCY,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    retentionMs: config.WEBHOOK_DELIVERY_RETENTION,
  });
  await syncAllIndexes(connection, components);

  components.worker.start();
  lifecycle.onShutdown('delivery worker', () => components.worker.stop());

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'webhooks', logger });
  await ensureTopics(kafka);
  const consumer = await startWebhookConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    fromBeginning: config.KAFKA_FROM_BEGINNING,
    connection,
    logger,
    deliveries: components.deliveries,
    webhooksRepository: components.webhooksRepository,
    deliveriesRepository: components.deliveriesRepository,
  });
  lifecycle.onShutdown('kafka consumer', () => consumer.stop());

  const projects = createInternalClient({
    baseUrl: config.PROJECTS_URL,
    internalSecret: config.INTERNAL_SECRET,
  });
  const app = createApp({
    logger,
    connection,
    internalSecret: config.INTERNAL_SECRET,
    projects,
    components,
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  lifecycle.onShutdown('http server', () => closeHttpServer(server));
  logger.info(
    { port: config.PORT, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE },
    'webhooks listening',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `webhooks failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
