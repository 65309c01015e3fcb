import type { Kafka } from 'kafkajs';
import type { Connection } from 'mongoose';
import {
  connectMongo,
  createKafka,
  createProducer,
  ensureTopics,
  OutboxRelay,
  syncIndexes,
  type EventConsumer,
} from '@platform/shared';
import {
  startTestServer,
  TEST_INTERNAL_SECRET,
  testInfraUrls,
  testLogger,
  uniqueName,
  type TestServer,
} from '@platform/shared/testing';
import { createApp } from '../app';
import { startDeletionConsumer } from '../deletion/deletion.consumer';
import { createModels, type Models } from '../models';
import { createProjectsRepository } from '../projects/projects.repository';
import { createServicesRepository } from '../services/services.repository';

export interface TestApp {
  url: string;
  connection: Connection;
  models: Models;
  kafka: Kafka;
  relay: OutboxRelay;
  consumer?: EventConsumer;
  /** The deletion consumer's group (it names the handled-event records). */
  groupId: string;
  close(): Promise<void>;
}

/**
 * The service as main.ts wires it, in the test process: its own database, the outbox relay
 * and, when asked, the deletion consumer in a group of its own; HTTP on a free port.
 */
export async function startTestApp(options: { deletionConsumer?: boolean } = {}): Promise<TestApp> {
  const { mongoUrl, kafkaBrokers } = testInfraUrls();
  const logger = testLogger('projects');
  const connection = await connectMongo({
    url: mongoUrl,
    dbName: uniqueName('projects_test'),
    logger,
  });
  const models = createModels(connection);
  await syncIndexes([models.projects, models.services]);

  const kafka = createKafka({
    brokers: kafkaBrokers,
    clientId: uniqueName('projects-test'),
    logger,
  });
  await ensureTopics(kafka);
  const relay = new OutboxRelay({
    producer: createProducer(kafka),
    models: [models.projects, models.services],
    logger,
  });
  relay.start();

  const groupId = uniqueName('projects-test');
  const consumer = options.deletionConsumer
    ? await startDeletionConsumer({
        kafka,
        groupId,
        connection,
        projects: createProjectsRepository(models.projects, relay),
        services: createServicesRepository(models.services, relay),
        logger,
        // Other files' deletions already on the topics are none of this file's business.
        fromBeginning: false,
      })
    : undefined;

  let server: TestServer | undefined;
  try {
    server = await startTestServer(
      createApp({
        logger,
        internalSecret: TEST_INTERNAL_SECRET,
        connection,
        models,
        outbox: relay,
      }),
    );
  } catch (err) {
    await consumer?.stop();
    await relay.stop();
    throw err;
  }
  const started = server;
  return {
    url: started.url,
    connection,
    models,
    kafka,
    relay,
    consumer,
    groupId,
    async close() {
      await started.close();
      await consumer?.stop();
      await relay.stop();
      await connection.dropDatabase();
      await connection.close();
    },
  };
}
