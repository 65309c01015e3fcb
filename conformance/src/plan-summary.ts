import type { mongo } from 'mongoose';

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

const INDEX_STAGES = new Set([
  'IXSCAN',
  'EXPRESS_IXSCAN',
  'IDHACK',
  'EXPRESS_IDHACK',
  'COUNT_SCAN',
  'DISTINCT_SCAN',
]);

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
