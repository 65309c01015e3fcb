import type { Kafka } from 'kafkajs';
import { consumerReady } from '../kafka';
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
 */
export async function collectMessages(
  kafka: Kafka,
  topics: string[],
  options: { fromBeginning?: boolean } = {},
) {
  const consumer = kafka.consumer({ groupId: uniqueName('test-collector'), maxWaitTimeInMs: 250 });
  const messages: CollectedMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? false });
  const ready = consumerReady(consumer);
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      messages.push({
        topic,
        partition,
        offset: message.offset,
        key: message.key?.toString('utf8') ?? null,
        value: JSON.parse(message.value?.toString('utf8') ?? 'null'),
      });
    },
  });
  await ready;
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
