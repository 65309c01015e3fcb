import type { Connection } from 'mongoose';

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
