import type { Model } from 'mongoose';
import type { OutboxEntry } from '@platform/shared';

type PullByEventIds = { $pull?: { outbox?: { eventId?: { $in?: unknown } } } };

/**
 * WORKAROUND for the shared OutboxRelay on FerretDB 1.24, to drop once the relay does it itself.
 * After publishing, the relay removes the entries with `$pull: { outbox: { eventId: { $in } } }`;
 * FerretDB matches the document but removes nothing from the array (a `$pull` condition on a
 * field of the elements is not applied), so the flag never clears and the relay republishes the
 * same events in a tight loop. This hands the relay a model whose `updateOne` turns that pull
 * into a `$pullAll` of the exact stored entries, which FerretDB does apply. Entries pushed
 * meanwhile are not equal to any of them, so they stay for the next round.
 */
export function outboxRelayModel<T>(model: Model<T>): Model<T> {
  const updateOne = async (filter: Record<string, unknown>, update: PullByEventIds & object) => {
    const ids = update.$pull?.outbox?.eventId?.$in;
    if (!Array.isArray(ids)) return model.updateOne(filter, update);
    const doc = await model.collection.findOne<{ outbox?: OutboxEntry[] }>(filter, {
      projection: { outbox: 1 },
    });
    const published = (doc?.outbox ?? []).filter((entry) => ids.includes(entry.eventId));
    if (published.length === 0) return undefined;
    return model.updateOne(filter, { $pullAll: { outbox: published } });
  };
  // Only what the relay calls: find (pending documents) and updateOne (pull, clear the flag).
  return { find: model.find.bind(model), updateOne } as unknown as Model<T>;
}
