import mongoose, { type Model, mongo } from 'mongoose';

/**
 * Whether the server serves a find from an index, read from its own `explain` (queryPlanner
 * verbosity: nothing is executed). Two formats are understood:
 *
 * - MongoDB: `queryPlanner.winningPlan`, a tree of stages (under `queryPlan` when the slot-based
 *   engine runs it, under `shards` on a cluster). Index-served: the winning plan reads an index
 *   (IXSCAN, EXPRESS_IXSCAN, IDHACK, EXPRESS_IDHACK, COUNT_SCAN, DISTINCT_SCAN) and nowhere the
 *   whole collection (COLLSCAN).
 * - FerretDB on SQLite: `queryPlanner.Plan`, SQLite's `EXPLAIN QUERY PLAN` rows as strings,
 *   `id=3 parent=0 notused=0 detail=SEARCH <table> USING INDEX <table>_<index> (<expr>=?)`.
 *   Index-served: the collection's table is read through an index (`SEARCH ... USING INDEX`,
 *   `SCAN ... USING INDEX`, or the rowid) and never scanned whole (a bare `SCAN <table>`).
 *   FerretDB names a collection's SQLite index `<table>_<index name>`, so the index name is
 *   given as MongoDB would give it.
 *
 * `fullIndexScan` tells an index read from end to end (MongoDB: every bound of an IXSCAN is
 * [MinKey, MaxKey]; SQLite: `SCAN <table> USING INDEX`), which serves a sort but not a filter.
 */
export interface PlanSummary {
  usesIndex: boolean;
  /** The (first) index the plan reads, as MongoDB names it (`_id_`, `serviceId_1_createdAt_-1`). */
  indexName?: string;
  /** Every index the plan reads, in plan order. */
  indexNames: string[];
  /** Whether some index is read whole (no bounds): a sort served, not a filter. */
  fullIndexScan: boolean;
  /**
   * Whether the documents come in the asked order from the index, sorted nowhere else (MongoDB:
   * no SORT stage; FerretDB: `sortPushdown`). Meaningful for a query with a sort.
   */
  sortedByIndex: boolean;
  engine: 'mongodb' | 'sqlite' | 'unknown';
  /** MongoDB: the winning plan's stages, top down; SQLite: the plan rows' details. */
  stages: string[];
  /** The server's explain output. */
  raw: mongo.Document;
}

/** A find filter, as the driver or mongoose takes it. */
export type Filter = mongo.Document;
export type Sort = Record<string, 1 | -1>;

/** Anything whose find can be explained: a mongoose Model or Collection, or a driver Collection. */
/* eslint-disable @typescript-eslint/no-explicit-any -- any model's, any collection's documents */
export type ExplainTarget = Model<any> | mongoose.Collection | mongo.Collection<any>;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** A mongoose find (or findOne) query: explained with its own cast filter, sort, skip, limit. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model's find or findOne
export type ExplainableQuery = mongoose.Query<any, any, any, any, any>;

export interface FindShape {
  filter: Filter;
  sort?: mongo.Sort;
  limit?: number;
  skip?: number;
  hint?: mongo.Hint;
}

const INDEX_STAGES = new Set([
  'IXSCAN',
  'EXPRESS_IXSCAN',
  'IDHACK',
  'EXPRESS_IDHACK',
  'COUNT_SCAN',
  'DISTINCT_SCAN',
]);

/**
 * Explains a find. Give a mongoose Query (`Model.find(filter).sort(s).limit(n)`, as a service
 * builds it), or a Model / Collection with the filter, sort and limit.
 *
 * On MongoDB, create the collection's indexes first (`syncIndexes`): explain on a collection that
 * does not exist yet answers `EOF`, which is no index.
 */
export async function explainPlan(query: ExplainableQuery): Promise<PlanSummary>;
export async function explainPlan(
  target: ExplainTarget,
  filter?: Filter,
  sort?: mongo.Sort,
  limit?: number,
): Promise<PlanSummary>;
export async function explainPlan(
  target: ExplainTarget | ExplainableQuery,
  filter: Filter = {},
  sort?: mongo.Sort,
  limit?: number,
): Promise<PlanSummary> {
  const { collection, shape } =
    target instanceof mongoose.Query
      ? fromQuery(target as ExplainableQuery)
      : { collection: nativeCollection(target), shape: { filter, sort, limit } };
  let cursor = collection.find(shape.filter);
  if (shape.sort !== undefined) cursor = cursor.sort(shape.sort);
  if (shape.skip) cursor = cursor.skip(shape.skip);
  if (shape.limit) cursor = cursor.limit(shape.limit);
  if (shape.hint !== undefined) cursor = cursor.hint(shape.hint);
  const raw = (await cursor.explain('queryPlanner')) as mongo.Document;
  return summarizePlan(raw);
}

/**
 * Explains an aggregation as the service sends it (queryPlanner verbosity): MongoDB answers with
 * the plan of the query its pipeline starts with (under `stages[0].$cursor` in the classic
 * engine), FerretDB with the SQLite plan of the leading `$match` it pushes down.
 */
export async function explainAggregate(
  target: ExplainTarget,
  pipeline: mongo.Document[],
): Promise<PlanSummary> {
  const raw = (await nativeCollection(target)
    .aggregate(pipeline)
    .explain('queryPlanner')) as mongo.Document;
  return summarizePlan(raw);
}

/**
 * Throws, with the plan in the message, unless the server serves the aggregation's read from an
 * index (the one named, when given).
 */
export async function expectAggregateIndexServed(
  target: ExplainTarget,
  pipeline: mongo.Document[],
  expected: IndexServedExpectation = {},
): Promise<PlanSummary> {
  return checkIndexServed(await explainAggregate(target, pipeline), expected);
}

export interface IndexServedExpectation {
  /** The index that must serve it (MongoDB's name for it); any index when omitted. */
  index?: string;
  /** Accept an index read whole (a sort served, the filter not): off unless asked for. */
  allowFullIndexScan?: boolean;
  /** The sort must be served by the index too: no sort of the documents read (off unless asked). */
  sortedByIndex?: boolean;
}

/**
 * Throws, with the plan in the message, unless the server serves the query from an index.
 * `await expectIndexServed(Deployment.find({ serviceId }).sort(NEWEST_FIRST).limit(21))`
 */
export async function expectIndexServed(
  query: ExplainableQuery,
  expected?: IndexServedExpectation,
): Promise<PlanSummary>;
export async function expectIndexServed(
  target: ExplainTarget,
  shape: FindShape,
  expected?: IndexServedExpectation,
): Promise<PlanSummary>;
export async function expectIndexServed(
  target: ExplainTarget | ExplainableQuery,
  shapeOrExpected?: FindShape | IndexServedExpectation,
  expectedForTarget?: IndexServedExpectation,
): Promise<PlanSummary> {
  let plan: PlanSummary;
  let expected: IndexServedExpectation;
  if (target instanceof mongoose.Query) {
    plan = await explainPlan(target as ExplainableQuery);
    expected = (shapeOrExpected as IndexServedExpectation | undefined) ?? {};
  } else {
    const shape = shapeOrExpected as FindShape;
    plan = await explainPlan(target, shape.filter, shape.sort, shape.limit);
    expected = expectedForTarget ?? {};
  }
  return checkIndexServed(plan, expected);
}

function checkIndexServed(plan: PlanSummary, expected: IndexServedExpectation): PlanSummary {
  const problems: string[] = [];
  if (!plan.usesIndex) problems.push('it is not served by an index');
  if (expected.index !== undefined && !plan.indexNames.includes(expected.index)) {
    problems.push(`it does not read the index ${expected.index}`);
  }
  if (expected.sortedByIndex && !plan.sortedByIndex) {
    problems.push('its documents are sorted after they are read, not read in the index order');
  }
  if (plan.usesIndex && plan.fullIndexScan && !expected.allowFullIndexScan) {
    problems.push('it reads an index whole (no bounds from its filter)');
  }
  if (problems.length > 0) {
    throw new Error(`${problems.join('; ')}. Plan: ${describePlan(plan)}`);
  }
  return plan;
}

/** A plan in one line, for failure messages. */
export function describePlan(plan: PlanSummary): string {
  const indexes = plan.indexNames.length ? ` indexes [${plan.indexNames.join(', ')}]` : '';
  return `${plan.engine}: ${plan.stages.join(' | ') || JSON.stringify(plan.raw)}${indexes}`;
}

/** Reads an explain output (see PlanSummary for the formats). */
export function summarizePlan(raw: mongo.Document): PlanSummary {
  // An aggregation MongoDB runs in its classic engine explains its query under its first stage.
  const cursorStage = (raw.stages as mongo.Document[] | undefined)?.[0]?.$cursor as
    mongo.Document | undefined;
  const planner = (raw.queryPlanner ?? cursorStage?.queryPlanner) as mongo.Document | undefined;
  if (planner?.winningPlan) return summarizeMongoPlan(raw, planner.winningPlan as mongo.Document);
  const rows = sqlitePlanRows(planner);
  if (rows.length > 0) return summarizeSqlitePlan(raw, rows);
  return summary(raw, 'unknown', [], {
    indexRead: false,
    indexNames: [],
    wholeRead: false,
    fullIndexScan: false,
  });
}

/**
 * What both readers find: whether an index is read and which, whether the whole collection is
 * read anywhere (a COLLSCAN, a bare table SCAN), whether an index is read without bounds.
 */
interface Reads {
  indexRead: boolean;
  indexNames: string[];
  wholeRead: boolean;
  fullIndexScan: boolean;
}

/** Index-served: some index is read, and nowhere the whole collection. */
function summary(
  raw: mongo.Document,
  engine: PlanSummary['engine'],
  stages: string[],
  { indexRead, indexNames, wholeRead, fullIndexScan }: Reads,
): PlanSummary {
  return {
    usesIndex: indexRead && !wholeRead,
    indexName: indexNames[0],
    indexNames,
    fullIndexScan,
    sortedByIndex: engine === 'mongodb' ? !stages.includes('SORT') : raw.sortPushdown === true,
    engine,
    stages,
    raw,
  };
}

function summarizeMongoPlan(raw: mongo.Document, winningPlan: mongo.Document): PlanSummary {
  const stages: string[] = [];
  const indexNames: string[] = [];
  let collectionScan = false;
  let fullIndexScan = false;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const stage = (node as mongo.Document).stage;
    if (typeof stage === 'string') {
      stages.push(stage);
      if (stage === 'COLLSCAN') collectionScan = true;
      if (INDEX_STAGES.has(stage)) {
        const name = (node as mongo.Document).indexName;
        if (typeof name === 'string') indexNames.push(name);
        else if (stage.endsWith('IDHACK')) indexNames.push('_id_');
        if (unbounded((node as mongo.Document).indexBounds)) fullIndexScan = true;
      }
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk(winningPlan);
  return summary(raw, 'mongodb', stages, {
    indexRead: stages.some((s) => INDEX_STAGES.has(s)),
    indexNames,
    wholeRead: collectionScan,
    fullIndexScan,
  });
}

/** An IXSCAN's bounds, `{field: ['[MinKey, MaxKey]']}`, that restrict nothing. */
function unbounded(bounds: unknown): boolean {
  if (bounds === null || typeof bounds !== 'object') return false;
  const lists = Object.values(bounds);
  return (
    lists.length > 0 &&
    lists.every(
      (intervals) =>
        Array.isArray(intervals) &&
        intervals.length === 1 &&
        /^\[(MinKey, MaxKey|MaxKey, MinKey)\]$/.test(String(intervals[0])),
    )
  );
}

/**
 * Every SQLite plan row under queryPlanner: its `detail=` part, or a bare row that reads like one
 * (`SCAN ...`, `SEARCH ...`, `USE TEMP B-TREE ...`, `COMPOUND QUERY`, `UNION ALL`, ...).
 */
function sqlitePlanRows(planner: mongo.Document | undefined): string[] {
  const rows: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === 'string') {
      const detail = /\bdetail=(.*)$/.exec(node)?.[1]?.trim();
      if (detail !== undefined) rows.push(detail);
      else if (/^(SCAN|SEARCH|USE TEMP B-TREE|MULTI-INDEX OR|COMPOUND QUERY)\b/.test(node)) {
        rows.push(node.trim());
      }
    } else if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') Object.values(node).forEach(walk);
  };
  walk(planner);
  return rows;
}

/** Tables that are not a collection: json_each over a parameter, a subquery, a constant. */
const NOT_A_COLLECTION = /^(json_each|json_tree|CONSTANT|\(|SUBQUERY|subquery)/;

function summarizeSqlitePlan(raw: mongo.Document, rows: string[]): PlanSummary {
  const indexNames: string[] = [];
  let tableScan = false;
  let indexRead = false;
  let fullIndexScan = false;
  for (const row of rows) {
    const m = /^(SCAN|SEARCH) (?:TABLE )?(\S+)(.*)$/.exec(row);
    if (!m) continue;
    const [, verb, table, rest] = m as unknown as [string, string, string, string];
    if (NOT_A_COLLECTION.test(table) || /VIRTUAL TABLE/.test(rest)) continue;
    const index = /USING (?:COVERING )?INDEX (\S+)/.exec(rest)?.[1];
    const rowid = /USING (?:INTEGER PRIMARY KEY|PRIMARY KEY|ROWID)/.test(rest);
    if (index !== undefined) {
      indexNames.push(index.startsWith(`${table}_`) ? index.slice(table.length + 1) : index);
    } else if (rowid) {
      indexNames.push('$recordId');
    }
    if (index !== undefined || rowid) {
      indexRead = true;
      if (verb === 'SCAN') fullIndexScan = true;
    } else {
      tableScan = true;
    }
  }
  return summary(raw, 'sqlite', rows, {
    indexRead,
    indexNames,
    wholeRead: tableScan,
    fullIndexScan,
  });
}

function fromQuery(query: ExplainableQuery): { collection: mongo.Collection; shape: FindShape } {
  const op = (query as unknown as { op?: string }).op;
  if (op !== 'find' && op !== 'findOne') {
    throw new Error(`explainPlan explains find and findOne queries, not ${String(op)}`);
  }
  const copy = query.clone();
  // The filter as mongoose sends it: cast to the schema (ids to ObjectIds, dates to Dates).
  const filter = copy.cast(copy.model) as Filter;
  const options = copy.getOptions() as {
    sort?: mongo.Sort;
    limit?: number;
    skip?: number;
    hint?: mongo.Hint;
  };
  return {
    collection: nativeCollection(copy.model),
    shape: {
      filter,
      sort: options.sort,
      limit: op === 'findOne' ? 1 : options.limit,
      skip: options.skip,
      hint: options.hint,
    },
  };
}

function nativeCollection(target: ExplainTarget): mongo.Collection {
  if (target instanceof mongo.Collection) return target;
  if (typeof target === 'function' && 'modelName' in target) {
    const db = target.db.db;
    if (!db) throw new Error(`the connection of model ${target.modelName} is not open`);
    return db.collection(target.collection.collectionName);
  }
  const collection = target as mongoose.Collection;
  const db = collection.conn?.db;
  if (!db) throw new Error(`the connection of collection ${collection.collectionName} is not open`);
  return db.collection(collection.collectionName);
}

/**
 * One of the product's list queries, built exactly as its service builds it (the service's
 * model, its filter, `NEWEST_FIRST`, its page limit), first page and deep.
 */
export interface ProductListQuery extends IndexServedExpectation {
  /** A sentence naming the list: "a service's deployments, newest first, a deep page". */
  name: string;
  /** The query as the service sends it: `Model.find(filter).sort(NEWEST_FIRST).limit(n)`. */
  query: () => ExplainableQuery;
}

/**
 * The product's list queries that must be index-served. A placeholder, empty here:
 * `product-queries.test.ts` builds the list from the services' models (after `syncIndexes`) and
 * proves each with `expectIndexServed`:
 *
 *     const cases: ProductListQuery[] = [
 *       { name: "a service's deployments, first page", index: 'serviceId_1_createdAt_-1__id_-1',
 *         query: () => Deployment.find({ serviceId }).sort(NEWEST_FIRST).limit(21) },
 *       { name: "a service's deployments, a deep page", index: 'serviceId_1_createdAt_-1__id_-1',
 *         query: () => Deployment.find({ serviceId, ...afterCursorFilter(position) })
 *           .sort(NEWEST_FIRST).limit(21) },
 *     ];
 *     test.each(cases)('$name is served by an index', async (c) => {
 *       await expectIndexServed(c.query(), c);
 *     });
 */
export const productListQueries: ProductListQuery[] = [];
