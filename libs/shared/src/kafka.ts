import { readFileSync } from 'node:fs';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import {
  Kafka,
  Partitioners,
  logLevel,
  type ISocketFactory,
  type Producer,
  type LogEntry,
  type SASLOptions,
} from 'kafkajs';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { kafkaEnv } from './config';
import { ALL_TOPICS } from './events';

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
 * must not subscribe to a topic that does not exist yet), with `config` (topic-level settings
 * such as `retention.ms`) when given.
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: string[] = ALL_TOPICS,
  partitions = 3,
  config: Record<string, string> = {},
) {
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
          configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
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
