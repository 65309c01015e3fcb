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
 * What the database says about a query: `explain` of `find(filter).sort(sort).limit(limit)`.
 * On FerretDB: its own `filterPushdown` / `sortPushdown` / `limitPushdown` flags and SQLite's
 * plan (`queryPlanner.Plan`, EXPLAIN QUERY PLAN lines: `SEARCH … USING INDEX …` or `SCAN …`);
 * on MongoDB: the winning plan (IXSCAN, SORT, LIMIT stages). `usesIndex` reads either.
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
  const queryPlan = plan.queryPlanner?.Plan ?? plan.queryPlanner?.winningPlan ?? plan.queryPlanner;
  const text = JSON.stringify(queryPlan ?? null);
  return {
    filter,
    sort: options.sort ?? null,
    limit: options.limit ?? null,
    filterPushdown: plan.filterPushdown ?? null,
    sortPushdown: plan.sortPushdown ?? null,
    limitPushdown: plan.limitPushdown ?? null,
    usesIndex: /USING (COVERING )?INDEX|IXSCAN|IDHACK|EXPRESS_IXSCAN/.test(text),
    /** The index named in the plan (SQLite's or MongoDB's), if any. */
    index:
      /USING (?:COVERING )?INDEX (\S+)/.exec(text)?.[1] ??
      /"indexName":"([^"]+)"/.exec(text)?.[1] ??
      null,
    plan: queryPlan ?? null,
  };
}

/**
 * The outbox relay's operations on the deployments collection (libs/shared/src/outbox.ts):
 * the periodic sweep `find({outboxPending: true}, {outbox: 1}).limit(100)` (at start and every
 * 5 s; it must be an index read, however many deployments there are), the read of a document a
 * writer names (`findById`), and the flag's conditional clear. None of them changes anything:
 * they are run against an already published deployment, which the clear's condition
 * (`outboxPending: true`) does not match.
 */
export async function probeOutboxSweep(deployments: Collection, times = 20) {
  const count = await deployments.countDocuments({});
  const published = await deployments.findOne({ outboxPending: false }, { projection: { _id: 1 } });
  if (!published) return null;
  say(`probing the outbox relay's queries on ${count} deployments (${times} times each)`);
  const id = published._id;
  const sweep = { outboxPending: true };
  return {
    documents: count,
    pendingNow: await deployments.countDocuments(sweep),
    ms: {
      'sweep: find({outboxPending: true}, {outbox: 1}).limit(100)': await repeat(times, () =>
        deployments
          .find(sweep, { projection: { outbox: 1 } })
          .limit(100)
          .toArray(),
      ),
      'named: findOne({_id}, {outbox: 1})': await repeat(times, () =>
        deployments.findOne({ _id: id }, { projection: { outbox: 1 } }),
      ),
      'clear: updateOne({_id, outboxPending: true, outbox: {$size: 0}}, {$set: {outboxPending: false}})':
        await repeat(times, () =>
          deployments.updateOne(
            { _id: id, outboxPending: true, outbox: { $size: 0 } },
            { $set: { outboxPending: false } },
          ),
        ),
    },
    plans: {
      sweep: await explainFind(deployments, sweep, { limit: 100, projection: { outbox: 1 } }),
      named: await explainFind(deployments, { _id: id }),
    },
  };
}
