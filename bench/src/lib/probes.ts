import type { mongo } from 'mongoose';
import { say } from './log';
import { distribution, timed, type Distribution } from './stats';

type Collection = mongo.Collection;
type Document = mongo.Document;

/** Runs `action` `times` times in a row and gives the distribution of its durations (ms). */
export async function repeat(times: number, action: () => Promise<unknown>): Promise<Distribution> {
  const durations: number[] = [];
  for (let i = 0; i < times; i++) durations.push((await timed(action)).ms);
  return distribution(durations);
}

/**
 * What FerretDB says about a query: `explain` on the find command, with FerretDB's own
 * `filterPushdown` / `sortPushdown` / `limitPushdown` flags and the SQLite plan.
 */
export async function explainFind(
  collection: Collection,
  filter: Document,
  options: { sort?: Document; limit?: number; projection?: Document } = {},
) {
  let cursor = collection.find(filter, { projection: options.projection });
  if (options.sort) cursor = cursor.sort(options.sort);
  if (options.limit) cursor = cursor.limit(options.limit);
  const plan = (await cursor.explain()) as Document;
  return {
    filter,
    sort: options.sort ?? null,
    limit: options.limit ?? null,
    filterPushdown: plan.filterPushdown ?? null,
    sortPushdown: plan.sortPushdown ?? null,
    limitPushdown: plan.limitPushdown ?? null,
    sqlitePlan: plan.queryPlanner?.Plan ?? plan.queryPlanner ?? null,
  };
}

/**
 * The outbox relay's operations on a transitions collection (libs/shared/src/outbox.ts,
 * OutboxRelay.drainOnce and publishDocument), timed as they stand and in an `_id`-only shape
 * FerretDB pushes down. None of them changes anything: the conditional updates are given a
 * condition that matches nothing, so FerretDB reads through the whole table, as it does for a
 * just-written event (the newest row is the table's last); the `_id`-only update rewrites an
 * already published document with what it holds.
 */
export async function probeOutboxRelay(transitions: Collection, times = 20) {
  const count = await transitions.countDocuments({});
  const newest = await transitions.find({}).sort({ _id: -1 }).limit(1).next();
  // Only an already published one: the probes below must not touch a pending event.
  if (!newest || newest.outboxPending !== false) return null;
  say(`probing the outbox relay's queries on ${count} transitions (${times} times each)`);
  const id = newest._id;
  const asItIs = {
    'find({outboxPending: true}).limit(100)': await repeat(times, () =>
      transitions
        .find({ outboxPending: true }, { projection: { outbox: 1 } })
        .limit(100)
        .toArray(),
    ),
    "updateOne({_id, 'outbox.0.eventId'}, {$pop}) to the end": await repeat(times, () =>
      transitions.updateOne(
        { _id: id, 'outbox.0.eventId': 'bench-probe-no-such-event' },
        { $pop: { outbox: -1 } },
      ),
    ),
    'updateOne({_id, outbox: {$size: 0}}, {$set: {outboxPending: false}}) to the end': await repeat(
      times,
      () =>
        transitions.updateOne(
          { _id: id, outbox: { $size: 1_000_000 } },
          { $set: { outboxPending: false } },
        ),
    ),
  };
  const idOnly = {
    'findOne({_id})': await repeat(times, () => transitions.findOne({ _id: id })),
    'updateOne({_id}, {$set: {outbox: [], outboxPending: false}})': await repeat(times, () =>
      transitions.updateOne({ _id: id }, { $set: { outbox: [], outboxPending: false } }),
    ),
  };
  const plans = [
    await explainFind(transitions, { outboxPending: true }, { limit: 100 }),
    await explainFind(transitions, { _id: id }),
  ];
  return { documents: count, asItIs, idOnly, plans };
}
