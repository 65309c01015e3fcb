import { createServer } from 'node:http';
import {
  closeHttpServer,
  connectMongo,
  createKafka,
  createLogger,
  createProducer,
  ensureTopics,
  Lifecycle,
  loadConfig,
  OutboxRelay,
  syncIndexes,
  type Logger,
} from '@platform/shared';
import { createApp } from './app';
import { configSchema, type Config } from './config';
import { startDeletionConsumer } from './deletion/deletion.consumer';
import { createModels } from './models';
import { createProjectsRepository } from './projects/projects.repository';
import { createServicesRepository } from './services/services.repository';

async function start(config: Config, logger: Logger, lifecycle: Lifecycle): Promise<void> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const models = createModels(connection);
  await syncIndexes([models.projects, models.services]);

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'projects', logger });
  await ensureTopics(kafka);
  const relay = new OutboxRelay({
    producer: createProducer(kafka),
    models: [models.projects, models.services],
    logger,
  });
  relay.start();
  lifecycle.onShutdown('outbox relay', () => relay.stop());

  const consumer = await startDeletionConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    connection,
    projects: createProjectsRepository(models.projects, relay),
    services: createServicesRepository(models.services, relay),
    logger,
  });
  lifecycle.onShutdown('deletion consumer', () => consumer.stop());

  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    models,
    outbox: relay,
  });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, resolve);
  });
  // Registered last, so it closes first: in-flight requests finish before their dependencies go.
  lifecycle.onShutdown('http server', () => closeHttpServer(server));
  lifecycle.handleSignals();
  logger.info({ port: config.PORT }, 'projects service listening');
}

const config = loadConfig(configSchema);
const logger = createLogger('projects', config.LOG_LEVEL);
const lifecycle = new Lifecycle(logger);
start(config, logger, lifecycle).catch(async (err: unknown) => {
  logger.fatal({ err }, 'start-up failed');
  await lifecycle.shutdown('start-up failed');
  process.exit(1);
});
