import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import {
  Kafka,
  Partitioners,
  logLevel,
  type ISocketFactory,
  type Consumer,
  type Producer,
  type LogEntry,
  type SASLOptions,
} from 'kafkajs';
import type { Connection } from 'mongoose';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { kafkaEnv } from './config';
import { ALL_TOPICS, platformEvent, type PlatformEvent } from './events';
import { Scheduler } from './scheduler';

/** Where the brokers are and how to log in to them (kafkaConnection builds it from the config). */
export interface KafkaConnection {
  brokers: string[];
  /** The SASL login; without it the client connects unauthenticated. */
  sasl?: { mechanism: 'scram-sha-512' | 'scram-sha-256'; username: string; password: string };
  /** TLS (SASL_SSL) and its options; without it plain TCP. */
  ssl?: ConnectionOptions;
}

export interface KafkaOptions extends KafkaConnection {
  clientId: string;
  logger: Logger;
}

/** The Kafka settings of a service's config (kafkaEnv). */
export type KafkaSettings = z.infer<typeof kafkaEnv>;

/**
 * The connection a service's Kafka settings describe: its SASL user, and TLS with the CA file
 * read now (a missing file fails the start-up, not a later connection). A user without a
 * password, or the reverse, is refused: it would silently connect unauthenticated.
 */
export function kafkaConnection(settings: KafkaSettings): KafkaConnection {
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = settings;
  if ((username === undefined) !== (password === undefined)) {
    throw new Error('KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD: set both, or neither');
  }
  const connection: KafkaConnection = { brokers: settings.KAFKA_BROKERS };
  if (username !== undefined && password !== undefined) {
    connection.sasl = { mechanism: settings.KAFKA_SASL_MECHANISM, username, password };
  }
  if (settings.KAFKA_TLS) {
    connection.ssl = settings.KAFKA_TLS_CA_FILE
      ? { ca: [readFileSync(settings.KAFKA_TLS_CA_FILE, 'utf8')] }
      : {};
  }
  return connection;
}

const PINO_LEVEL: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** The connections each client has opened and not yet seen closed. */
const openSockets = new WeakMap<Kafka, Set<Socket>>();

/**
 * kafkajs's own socket factory, plus a record of the client's open sockets (closeKafka). Plain
 * TCP, or TLS when the client is configured for it, with keep-alive as kafkajs sets it.
 */
function trackingSocketFactory(sockets: Set<Socket>): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const socket = ssl
      ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
      : netConnect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    return socket;
  };
}

/**
 * Closes what a client's producers, consumers and admins left open after they disconnected, and
 * says how much. kafkajs can leave one behind: a consumer's batch still running when it
 * disconnects sends its heartbeat afterwards on a fresh connection (seen after a broker outage;
 * tulios/kafkajs#1147, #1639). Register it before the client's users, so it runs after them.
 */
export function closeKafka(kafka: Kafka, logger: Logger): void {
  // A disconnected connection has ended its side (and unref'd it): it closes on its own.
  const left = [...(openSockets.get(kafka) ?? [])].filter(
    (socket) => !socket.writableEnded && !socket.destroyed,
  );
  if (left.length > 0) {
    logger.warn({ connections: left.length }, 'closing Kafka connections left open');
  }
  // With an error, so kafkajs's connection sees it, fails what waited on it and stops its timers.
  const closed = new Error('closed at shutdown: left open after its client disconnected');
  for (const socket of left) socket.destroy(closed);
}

/**
 * A kafkajs client whose logs go through pino, one level down: kafkajs is chatty. It logs in with
 * `sasl` when given (the password is never logged), over TLS when `ssl` is given.
 */
export function createKafka(options: KafkaOptions): Kafka {
  const log = options.logger.child({ component: 'kafka' });
  const sockets = new Set<Socket>();
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    // kafkajs types each SCRAM variant apart; this is one of them.
    ...(options.sasl ? { sasl: options.sasl as SASLOptions } : {}),
    ...(options.ssl ? { ssl: options.ssl } : {}),
    socketFactory: trackingSocketFactory(sockets),
    connectionTimeout: 3_000,
    retry: { initialRetryTime: 300, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        log[PINO_LEVEL[level] ?? 'info']({ ...rest, namespace: undefined }, message);
      },
  });
  openSockets.set(kafka, sockets);
  return kafka;
}

/**
 * Creates the platform's topics if missing (auto-creation is off on the broker, and consumers
 * must not subscribe to a topic that does not exist yet).
 */
export async function ensureTopics(kafka: Kafka, topics: string[] = ALL_TOPICS, partitions = 3) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: partitions,
          replicationFactor: 1,
        })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}

export function createProducer(kafka: Kafka): Producer {
  return kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 3 },
  });
}

/**
 * The events a consumer group has handled, so a re-delivered one is handled once: in the
 * consuming service's own database, collection `processed_events`, `_id` = `<group id>:<event
 * id>` (one name per consumer: its group id). Old entries are pruned by `prune()`, which the
 * consumer schedules hourly.
 */
export function mongoProcessedEvents(connection: Connection, groupId: string) {
  const consumer = groupId;
  const collection = connection.collection<{ _id: string; consumer: string; at: Date }>(
    'processed_events',
  );
  return {
    async has(eventId: string) {
      return (await collection.countDocuments({ _id: `${consumer}:${eventId}` }, { limit: 1 })) > 0;
    },
    async add(eventId: string) {
      await collection.updateOne(
        { _id: `${consumer}:${eventId}` },
        { $setOnInsert: { consumer, at: new Date() } },
        { upsert: true },
      );
    },
    async prune(olderThan: Date) {
      await collection.deleteMany({ consumer, at: { $lt: olderThan } });
    },
    async ensureIndexes() {
      await collection.createIndex({ consumer: 1, at: 1 });
    },
  };
}

export interface EventConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  logger: Logger;
  /** The service's own database: handled event ids are remembered there (mongoProcessedEvents). */
  connection: Connection;
  handle: (event: PlatformEvent, topic: string) => Promise<void>;
  /** Where a brand-new consumer group starts. Default true: no event published before is lost. */
  fromBeginning?: boolean;
  /** How long handled event ids are remembered (default 7 days, far beyond any redelivery). */
  rememberEventsForMs?: number;
}

const PRUNE_EVERY_MS = 60 * 60_000;
const REMEMBER_EVENTS_MS = 7 * 24 * 60 * 60_000;

export interface EventConsumer {
  consumer: Consumer;
  stop(): Promise<void>;
}

// Longer than the session timeout below: a member restarted after a crash joins only once the
// broker has evicted its dead predecessor.
const READY_TIMEOUT_MS = 60_000;
const SESSION_TIMEOUT_MS = 15_000;

/**
 * Resolves once the consumer has joined its group AND completed a first fetch. Joining is not
 * enough: a new group's starting offset ("latest") is resolved at its first fetch, so a message
 * produced between the join and that fetch would be skipped.
 */
export function consumerReady(consumer: Consumer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('consumer did not join its group and fetch in time'));
    }, READY_TIMEOUT_MS);
    const off = consumer.on(consumer.events.FETCH, () => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** A consumer of `topics` that hands every well-formed event to `onEvent`; malformed ones are logged. */
async function runConsumer(options: {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  log: Logger;
  fromBeginning: boolean;
  autoCommit: boolean;
  onEvent: (event: PlatformEvent, topic: string) => Promise<void>;
}): Promise<{ consumer: Consumer; disconnect: () => Promise<void> }> {
  const { log } = options;
  let stopping = false;
  const consumer = options.kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    // After a crash (the broker gone a while) kafkajs restarts the consumer on a timer, unless
    // it is being stopped: a restart racing stop() would reconnect after the disconnect.
    retry: { retries: 5, restartOnFailure: async () => !stopping },
    // Fetches still return as soon as a message arrives; this bounds how long an idle one waits.
    maxWaitTimeInMs: 1_000,
    // A crashed member's partitions move on after this, not kafkajs's default 30 s.
    sessionTimeout: SESSION_TIMEOUT_MS,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning });
  const ready = consumerReady(consumer);
  await consumer.run({
    autoCommit: options.autoCommit,
    eachMessage: async ({ topic, message }) => {
      let event: PlatformEvent;
      try {
        event = platformEvent.parse(JSON.parse(message.value?.toString('utf8') ?? ''));
      } catch (err) {
        log.error({ topic, offset: message.offset, err }, 'skipping malformed event');
        return;
      }
      await options.onEvent(event, topic);
    },
  });
  await ready;
  log.info({ topics: options.topics }, 'consumer joined');
  return {
    consumer,
    disconnect: async () => {
      stopping = true;
      await consumer.disconnect();
    },
  };
}

export async function startEventConsumer(options: EventConsumerOptions): Promise<EventConsumer> {
  const log = options.logger.child({ component: 'consumer', groupId: options.groupId });
  const processed = mongoProcessedEvents(options.connection, options.groupId);
  await processed.ensureIndexes();
  const { consumer, disconnect } = await runConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: options.topics,
    log,
    fromBeginning: options.fromBeginning ?? true,
    autoCommit: true,
    onEvent: async (event, topic) => {
      if (await processed.has(event.eventId)) return;
      await options.handle(event, topic);
      await processed.add(event.eventId);
    },
  });
  const housekeeping = new Scheduler(log);
  housekeeping.every({
    name: 'prune handled event ids',
    everyMs: PRUNE_EVERY_MS,
    runAtStart: true,
    run: () =>
      processed.prune(new Date(Date.now() - (options.rememberEventsForMs ?? REMEMBER_EVENTS_MS))),
  });
  return {
    consumer,
    stop: async () => {
      await housekeeping.stop();
      await disconnect();
    },
  };
}

/**
 * Every event on `topics` from now on, in this process, for reactions held in memory (waking the
 * requests that wait for a deployment to change): a group of its own per process (`<prefix>-<random
 * id>`), so each replica sees every event; nothing is remembered or committed, a restart starts at
 * the end again. Not for work that must happen once: that is startEventConsumer.
 */
export async function watchEvents(options: {
  kafka: Kafka;
  groupPrefix: string;
  topics: string[];
  logger: Logger;
  handle: (event: PlatformEvent) => void;
}): Promise<EventConsumer> {
  const groupId = `${options.groupPrefix}-${randomUUID()}`;
  const { consumer, disconnect } = await runConsumer({
    kafka: options.kafka,
    groupId,
    topics: options.topics,
    log: options.logger.child({ component: 'watch', groupId }),
    fromBeginning: false,
    autoCommit: false,
    onEvent: async (event) => options.handle(event),
  });
  return { consumer, stop: disconnect };
}
