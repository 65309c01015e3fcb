import mongoose, { type Model, mongo } from 'mongoose';
import { describePlan, summarizePlan, type PlanSummary } from './plan-summary';

export { describePlan, summarizePlan, type PlanSummary } from './plan-summary';

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
