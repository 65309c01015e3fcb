import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { infraEnv } from './env';

const run = promisify(execFile);

/**
 * The SQLite indexes FerretDB made for a collection, read-only from the database file of our
 * private FerretDB (sqlite3 CLI): whether the service's `createIndexes` became SQLite indexes a
 * plan can name (`explain` shows which one a query used). Null when sqlite3 or the file is not
 * there (e.g. BENCH_INFRA=shared, or MongoDB itself).
 */
export async function sqliteIndexes(database: string, collection: string) {
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
    )
      .split('\n')
      .filter(Boolean);
    return { table, indexes };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
