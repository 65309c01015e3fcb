import type { Kafka } from 'kafkajs';
import { runUntilReady } from '../kafka-consumer';
import { uniqueName, waitFor } from './helpers';

export interface CollectedMessage {
  topic: string;
  key: string | null;
  value: any;
  partition: number;
  offset: string;
}

/**
 * A consumer that records what reaches a topic, for asserting on events. It joins its own new
 * group at the latest offset (or the earliest, with `fromBeginning`) and resolves once it is
 * reading, so start it before acting.
 *
 * Where it starts is committed at once: a group that rejoins (a missed heartbeat on a loaded
 * machine) resumes from its committed offsets, and without any it would start again at the
 * then latest offset, silently skipping what was published meanwhile. A message read twice after
 * such a rejoin is recorded once.
 */
export async function collectMessages(
  kafka: Kafka,
  topics: string[],
  options: { fromBeginning?: boolean } = {},
) {
  const fromBeginning = options.fromBeginning ?? false;
  const admin = kafka.admin();
  await admin.connect();
  const starts = await Promise.all(
    topics.map(async (topic) => ({
      topic,
      partitions: (await admin.fetchTopicOffsets(topic)).map((p) => ({
        partition: p.partition,
        offset: fromBeginning ? p.low : p.high,
      })),
    })),
  );
  await admin.disconnect();

  const consumer = kafka.consumer({ groupId: uniqueName('test-collector'), maxWaitTimeInMs: 250 });
  const messages: CollectedMessage[] = [];
  const seen = new Set<string>();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning });
  await runUntilReady(consumer, {
    eachMessage: async ({ topic, partition, message }) => {
      const at = `${topic}/${partition}/${message.offset}`;
      if (seen.has(at)) return;
      seen.add(at);
      messages.push({
        topic,
        partition,
        offset: message.offset,
        key: message.key?.toString('utf8') ?? null,
        value: JSON.parse(message.value?.toString('utf8') ?? 'null'),
      });
    },
  });
  await consumer
    .commitOffsets(
      starts.flatMap(({ topic, partitions }) =>
        partitions.map(({ partition, offset }) => ({ topic, partition, offset })),
      ),
    )
    // A group rebalancing right now refuses it: the collector still works as before.
    .catch(() => undefined);
  return {
    messages,
    /** Waits until `predicate` matches at least `count` messages and returns those. */
    async waitFor(predicate: (m: CollectedMessage) => boolean, count = 1, timeoutMs = 20_000) {
      return waitFor(
        () => {
          const matched = messages.filter(predicate);
          return matched.length >= count ? matched : null;
        },
        { timeoutMs, what: `${count} message(s) on ${topics.join(', ')}` },
      );
    },
    stop: () => consumer.disconnect(),
  };
}
