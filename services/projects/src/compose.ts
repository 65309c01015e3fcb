import {
  connectMongo,
  createKafka,
  createProducer,
  ensureTopics,
  OutboxRelay,
  syncIndexes,
  type Runtime,
} from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { startDeletionConsumer } from './deletion/deletion.consumer';
import { createModels } from './models';
import { ProjectsRepository } from './projects/projects.repository';
import { ProjectsService } from './projects/projects.service';
import { ServicesRepository } from './services/services.repository';
import { ServicesService } from './services/services.service';

/**
 * The projects service's composition root, for main.ts (runService) and every test alike: opens
 * Mongo, the outbox relay and the deletion consumer, each registering its closer as it opens, and
 * builds the HTTP app on them. Nothing here needs a seam: tests change only the configuration.
 */
export async function compose(config: Config, runtime: Runtime) {
  const { logger, lifecycle } = runtime;
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const models = createModels(connection);
  await syncIndexes(models);

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'projects', logger });
  await ensureTopics(kafka);
  const relay = new OutboxRelay({
    producer: createProducer(kafka),
    models: Object.values(models),
    logger,
  });
  relay.start();
  lifecycle.onShutdown('outbox relay', () => relay.stop());

  const projectsRepository = new ProjectsRepository(models.projects, relay);
  const servicesRepository = new ServicesRepository(models.services, relay);
  const consumer = await startDeletionConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    fromBeginning: config.KAFKA_FROM_BEGINNING,
    connection,
    projects: projectsRepository,
    services: servicesRepository,
    logger,
  });
  lifecycle.onShutdown('deletion consumer', () => consumer.stop());

  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    projects: new ProjectsService({ projects: projectsRepository }),
    services: new ServicesService({ projects: projectsRepository, services: servicesRepository }),
  });
  return { app, connection, models, kafka, relay };
}
