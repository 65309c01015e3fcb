import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Consumer, ConsumerRunConfig, Kafka, KafkaMessage } from 'kafkajs';
import type { Connection } from 'mongoose';
import type { Logger } from 'pino';
import { platformEvent, type PlatformEvent } from './events';
import { mongoProcessedEvents } from './processed-events';
import { Scheduler } from './scheduler';

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
  /** How long joining the group and a first fetch may take (default READY_TIMEOUT_MS). */
  readyTimeoutMs?: number;
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
 * Runs a connected, subscribed consumer and resolves once it has joined its group AND completed a
 * first fetch. Joining is not enough: a new group's starting offset ("latest") is resolved at its
 * first fetch, so a message produced between the join and that fetch would be skipped. Rejects
 * after `timeoutMs`, or when `run` does, and then disconnects the consumer; the deadline is one
 * outcome of the race, never a rejection of its own left for nobody.
 */
export async function runUntilReady(
  consumer: Consumer,
  config: ConsumerRunConfig,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let off = () => {};
  const fetched = new Promise<void>((resolve) => {
    off = consumer.on(consumer.events.FETCH, () => resolve());
  });
  const deadline = new AbortController();
  const timedOut = delay(timeoutMs, undefined, { signal: deadline.signal }).then(() => {
    throw new Error(`the consumer did not join its group and fetch within ${timeoutMs} ms`);
  });
  const running = consumer.run(config);
  try {
    await Promise.race([Promise.all([running, fetched]), timedOut]);
  } catch (err) {
    // Not left running. Once its run() has settled: kafkajs lets a join in flight go on through a
    // disconnect (the group's rebalance timeout, at worst) and only then starts fetching.
    void running
      .catch(() => undefined)
      .then(() => consumer.disconnect())
      .catch(() => undefined);
    throw err;
  } finally {
    off();
    deadline.abort();
    // Aborted (the race was won otherwise): its AbortError is nobody's news.
    timedOut.catch(() => undefined);
  }
}

/** A consumer of `topics` that hands every well-formed event to `onEvent`; malformed ones are logged. */
async function runConsumer(options: {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  log: Logger;
  fromBeginning: boolean;
  autoCommit: boolean;
  readyTimeoutMs?: number;
  onEvent: (event: PlatformEvent, topic: string) => Promise<void>;
  /** Topics whose messages are not platform events: each handed as it is to its handler. */
  raw?: RawHandlers;
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
  const disconnect = async () => {
    stopping = true;
    await consumer.disconnect();
  };
  try {
    await consumer.connect();
    await consumer.subscribe({
      topics: [...options.topics, ...Object.keys(options.raw ?? {})],
      fromBeginning: options.fromBeginning,
    });
  } catch (err) {
    await disconnect().catch(() => undefined);
    throw err;
  }
  try {
    const eachMessage: ConsumerRunConfig['eachMessage'] = async ({ topic, message }) => {
      const raw = options.raw?.[topic];
      if (raw) return raw(message);
      let event: PlatformEvent;
      try {
        event = platformEvent.parse(JSON.parse(message.value?.toString('utf8') ?? ''));
      } catch (err) {
        log.error({ topic, offset: message.offset, err }, 'skipping malformed event');
        return;
      }
      await options.onEvent(event, topic);
    };
    await runUntilReady(
      consumer,
      { autoCommit: options.autoCommit, eachMessage },
      options.readyTimeoutMs,
    );
  } catch (err) {
    // runUntilReady disconnects it: no restart may race that.
    stopping = true;
    throw err;
  }
  log.info({ topics: options.topics }, 'consumer joined');
  return { consumer, disconnect };
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
    readyTimeoutMs: options.readyTimeoutMs,
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

/** Per topic, what to do with each of its messages (they are not platform events). */
export type RawHandlers = Record<string, (message: KafkaMessage) => void>;

/**
 * Every event on `topics` from now on, in this process, for reactions held in memory (waking the
 * requests that wait for a deployment to change): a group of its own per process (`<prefix>-<random
 * id>`), so each replica sees every event; nothing is remembered or committed, a restart starts at
 * the end again. Not for work that must happen once: that is startEventConsumer. With `raw`, the
 * same consumer also hands every message of those topics (notices that are not platform events,
 * such as a log's appends) to their handler, unparsed.
 */
export async function watchEvents(options: {
  kafka: Kafka;
  groupPrefix: string;
  topics: string[];
  logger: Logger;
  handle: (event: PlatformEvent) => void;
  raw?: RawHandlers;
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
    raw: options.raw,
  });
  return { consumer, stop: disconnect };
}
