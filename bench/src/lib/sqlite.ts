import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { infraEnv } from './env';

const run = promisify(execFile);

/**
 * SQLite's own plan for FerretDB's `_id` lookup, read-only from the database file of our private
 * FerretDB (sqlite3 CLI). FerretDB 1.24 as released filters on `_ferretdb_sjson->'$._id'` while
 * its `_id_` index is on `_ferretdb_sjson->"_id"`: SQLite cannot match the two, so the lookup is
 * a table scan. Our build (scripts/infra/ferretdb/patches/) filters on the index's expression.
 * Null when sqlite3 or the file is not there (e.g. BENCH_INFRA=shared).
 */
export async function sqliteIdPlans(database: string, collection: string) {
  const runDir = infraEnv().PLATFORM_RUN_DIR;
  if (!runDir) return null;
  const file = path.join(runDir, 'ferretdb', 'data', `${database}.sqlite`);
  if (!existsSync(file)) return null;
  const sqlite = (sql: string) =>
    run('sqlite3', ['-readonly', file, sql], { timeout: 30_000 }).then((r) => r.stdout.trim());
  try {
    const table = await sqlite(
      `SELECT table_name FROM _ferretdb_collections WHERE name = '${collection}'`,
    );
    const indexes = (
      await sqlite(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '${table}'`)
    ).split('\n');
    const plan = async (expression: string) =>
      (
        await sqlite(
          `EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "${table}" WHERE ${expression} = 'x'`,
        )
      )
        .split('\n')
        .filter((line) => !line.startsWith('QUERY PLAN'))
        .map((line) => line.replace(/^[`|-]+/, '').trim());
    return {
      table,
      indexes,
      releasedFerretdbLookup: {
        where: `_ferretdb_sjson->'$._id' = ?`,
        plan: await plan(`_ferretdb_sjson->'$._id'`),
      },
      patchedFerretdbLookup: {
        where: `_ferretdb_sjson->"_id" = ?`,
        plan: await plan(`_ferretdb_sjson->"_id"`),
      },
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
