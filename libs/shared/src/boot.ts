import { createServer, type RequestListener } from 'node:http';
import type { Kafka } from 'kafkajs';
import type { Connection, Model } from 'mongoose';
import type { z } from 'zod';
import { loadConfig } from './config';
import {
  closeKafka,
  createKafka,
  createProducer,
  ensureTopics,
  kafkaConnection,
  type KafkaSettings,
} from './kafka';
import {
  startEventConsumer,
  type EventConsumer,
  type EventConsumerOptions,
} from './kafka-consumer';
import { closeHttpServer, Lifecycle } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { connectMongo, syncIndexes } from './mongo';
import { OutboxRelay } from './outbox';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model, whatever its document type
type AnyModel = Model<any>;

/** What a service's composition root receives: its parsed config and the process's parts. */
export interface Runtime {
  logger: Logger;
  /** Everything the root opens registers its closer here, in the order it opened it. */
  lifecycle: Lifecycle;
}

/** What a composition root returns: at least the HTTP app. */
export interface Composed {
  app: RequestListener;
}

export interface ServiceDefinition<S extends z.ZodTypeAny> {
  /** Names the process in logs and metrics. */
  name: string;
  /** The environment schema (src/config.ts); its output must carry PORT and LOG_LEVEL. */
  configSchema: S;
  /** The service's composition root (src/compose.ts), the same one its tests call. */
  compose: (config: z.infer<S>, runtime: Runtime) => Promise<Composed>;
  /** Time for the whole graceful shutdown before the process exits anyway. */
  shutdownTimeoutMs?: number;
}

/**
 * Connections the kernel may hold for a process before it accepts them (Node's default is 511;
 * the kernel caps it at net.core.somaxconn). A burst of new clients beyond the queue has its
 * connection attempts dropped and retried after 1, 3, 7 s.
 */
const LISTEN_BACKLOG = 4096;

/**
 * Where a process listens unless its config's HOST says otherwise: this machine only, so that
 * nothing on the host's other addresses (nor a tenant's code that could reach them) gets to the
 * platform's ports. Containers set HOST=0.0.0.0 (docker-compose.yml, k8s/).
 */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

/**
 * The boot sequence every service's `main.ts` runs, so they all read the same way: config (every
 * problem printed, exit 1) → logger → signals → the composition root (connections, app,
 * consumers, each registering its closer) → listen on HOST (default 127.0.0.1) → log. At SIGTERM the Lifecycle closes in
 * reverse: the HTTP server first, so in-flight requests finish before what they use goes.
 * A start that fails closes what was opened and exits 1.
 */
export function runService<S extends z.ZodTypeAny>(definition: ServiceDefinition<S>): void {
  const config = loadConfig(definition.configSchema) as z.infer<S> & {
    PORT: number;
    HOST?: string;
    LOG_LEVEL: string;
  };
  const host = config.HOST ?? DEFAULT_LISTEN_HOST;
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, definition.shutdownTimeoutMs);
  lifecycle.handleSignals();

  const start = async () => {
    const { app } = await definition.compose(config, { logger, lifecycle });
    const server = createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: config.PORT, backlog: LISTEN_BACKLOG }, resolve);
    });
    lifecycle.onShutdown('http server', () => closeHttpServer(server));
    logger.info({ host, port: config.PORT }, `${definition.name} listening`);
  };
  start().catch(async (err: unknown) => {
    logger.fatal({ err }, 'start-up failed');
    await lifecycle.shutdown('start-up failed');
    process.exit(1);
  });
}

/**
 * Opens the service's own database, creates its models' indexes, and registers the closer:
 * the first step of every composition root that has a database.
 */
export async function openDatabase<M extends Record<string, AnyModel>>(
  config: { MONGO_URL: string; MONGO_DB: string },
  { logger, lifecycle }: Runtime,
  createModels: (connection: Connection) => M,
): Promise<{ connection: Connection; models: M }> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const models = createModels(connection);
  await syncIndexes(models);
  return { connection, models };
}

/**
 * The Kafka client of the service `clientId`, logged in as the service's own user (kafkaEnv),
 * with the platform's topics created if missing. Its closer (closeKafka) runs after those of its
 * producers and consumers, registered later. In production a client without a login is refused
 * (contracts.md, Trust: Kafka connections authenticate).
 */
export async function openKafka(
  config: KafkaSettings & { NODE_ENV?: string },
  { logger, lifecycle }: Runtime,
  clientId: string,
): Promise<Kafka> {
  const connection = kafkaConnection(config);
  if (config.NODE_ENV === 'production' && !connection.sasl) {
    throw new Error(
      'KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD: production connects to Kafka only with a login',
    );
  }
  const kafka = createKafka({ ...connection, clientId, logger });
  lifecycle.onShutdown('kafka client', () => closeKafka(kafka, logger));
  await ensureTopics(kafka);
  return kafka;
}

/** Starts the outbox relay of `models` (outbox.ts) and registers its closer. */
export function startOutboxRelay(
  kafka: Kafka,
  models: AnyModel[],
  { logger, lifecycle }: Runtime,
): OutboxRelay {
  const relay = new OutboxRelay({ producer: createProducer(kafka), models, logger });
  relay.start();
  lifecycle.onShutdown('outbox relay', () => relay.stop());
  return relay;
}

/**
 * Starts the service's event consumer in its group (consumerEnv: KAFKA_GROUP_ID,
 * KAFKA_FROM_BEGINNING), handled event ids kept in its database, and registers its closer.
 */
export async function startServiceConsumer(
  config: { KAFKA_GROUP_ID: string; KAFKA_FROM_BEGINNING: boolean },
  { logger, lifecycle }: Runtime,
  parts: Pick<EventConsumerOptions, 'kafka' | 'connection' | 'topics' | 'handle'>,
): Promise<EventConsumer> {
  const consumer = await startEventConsumer({
    ...parts,
    groupId: config.KAFKA_GROUP_ID,
    fromBeginning: config.KAFKA_FROM_BEGINNING,
    logger,
  });
  lifecycle.onShutdown('event consumer', () => consumer.stop());
  return consumer;
}
