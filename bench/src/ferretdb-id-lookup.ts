/**
 * Why `_id` lookups scanned on the local database, and what our FerretDB patch changes.
 *
 * FerretDB 1.24's SQLite backend, as released, hands `{ _id: value }` to SQLite as
 * `WHERE _ferretdb_sjson->'$._id' = ?` (metadata.IDColumn), while it builds the `_id_` index on
 * `_ferretdb_sjson->"_id"`. SQLite matches index expressions by their text, so the index is never
 * used: every "pushed down" `_id` lookup reads the whole table (EXPLAIN QUERY PLAN: SCAN).
 * scripts/infra builds FerretDB with scripts/infra/ferretdb/patches/ applied, which fixes that.
 *
 * This builds FerretDB 1.24 as released (the module scripts/infra/ferretdb uses, without our
 * patches, into a temporary directory), runs it on 127.0.0.1:27047 beside the benchmark's
 * FerretDB as scripts/infra builds it (patched), writes the same documents into a scratch
 * database of each and times `findOne({ _id })`, the deployments list query, and their plans.
 * Nothing in the repository or the running servers is changed; the build, its data and
 * the scratch databases are removed at the end. Needs Go (scripts/infra already does).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Types, type mongo } from 'mongoose';
import { intEnv } from './lib/env';
import { say } from './lib/log';
import { explainFind, repeat } from './lib/probes';
import { writeResults } from './lib/results';
import { withReleasedAndPatched } from './lib/ferretdb-released';
import { main } from './lib/stack';
import { connectMongo } from './lib/stores';

const run = promisify(execFile);
const FERRETDB = 'github.com/FerretDB/FerretDB';
const VERSION = 'v1.24.0';
const RELEASED_PORT = 27047;
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const LOOKUPS = intEnv('BENCH_LOOKUPS', 50);
const AS_RELEASED = 'IDColumn = DefaultColumn + "->\'$._id\'"';
const PATCHED = 'IDColumn = DefaultColumn + `->"_id"`';

/** Go's module cache path of a module (upper-case letters escaped as !lower). */
const escaped = (module: string) => module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

/** The released module's `IDColumn` is as this benchmark expects (downloaded if missing). */
async function checkReleasedIdColumn(build: string): Promise<void> {
  const metadata = path.join(
    (await run('go', ['env', 'GOMODCACHE'], { cwd: build })).stdout.trim(),
    `${escaped(FERRETDB)}@${VERSION}`,
    'internal/backends/sqlite/metadata/metadata.go',
  );
  try {
    readFileSync(metadata);
  } catch {
    say(`downloading ${FERRETDB}@${VERSION} (Go module proxy)`);
    await run('go', ['mod', 'download', `${FERRETDB}@${VERSION}`], { cwd: build });
  }
  if (!readFileSync(metadata, 'utf8').includes(AS_RELEASED))
    throw new Error(`${metadata}: the IDColumn line is not as expected`);
}

async function measure(label: string, url: string, size: number) {
  const connection = await connectMongo(url);
  const db = connection.useDb('bench_scratch_id_lookup');
  await db.dropDatabase();
  const deployments = db.collection('deployments');
  // The deployments service's own indexes (services/deployments/.../deployments.model.ts).
  await deployments.createIndex({ serviceId: 1, createdAt: -1, _id: -1 });
  await deployments.createIndex({ projectId: 1 });
  const ids: Types.ObjectId[] = [];
  const now = Date.now();
  for (let from = 0; from < size; from += 2_000) {
    const docs: mongo.Document[] = [];
    for (let i = from; i < Math.min(size, from + 2_000); i++) {
      const _id = new Types.ObjectId();
      ids.push(_id);
      docs.push({
        _id,
        accountId: 'a'.repeat(24),
        projectId: 'p'.repeat(24),
        serviceId: 's'.repeat(24),
        commitHash: 'c'.repeat(40),
        commitMessage: `Seeded commit ${i}`,
        logs: 'building ...\nbuild done\ndeploying ...\ndeploy done\n',
        createdAt: new Date(now - (size - i) * 60_000),
      });
    }
    await deployments.insertMany(docs, { ordered: false });
  }
  let misses = 0;
  const byId = await repeat(LOOKUPS, async () => {
    const id = ids[Math.floor(Math.random() * ids.length)]!;
    const found = await deployments.findOne({ _id: id });
    if (!found?._id.equals(id)) misses++;
  });
  const newest = await repeat(LOOKUPS, () => deployments.findOne({ _id: ids[ids.length - 1] }));
  const listFilter = { serviceId: 's'.repeat(24) };
  const list = await repeat(2, () =>
    deployments.find(listFilter).sort({ createdAt: -1, _id: -1 }).limit(21).toArray(),
  );
  const plans = {
    byId: await explainFind(deployments, { _id: ids[0] }),
    list: await explainFind(deployments, listFilter, {
      sort: { createdAt: -1, _id: -1 },
      limit: 21,
    }),
  };
  await db.dropDatabase();
  await connection.close();
  say(`${label}, ${size} documents: findOne({_id}) p50 ${byId.p50} ms, list p50 ${list.p50} ms`);
  return {
    documents: size,
    findOneById: byId,
    findNewestById: newest,
    misses,
    listFirstPage: list,
    plans,
  };
}

main('ferretdb-id-lookup', 1800, () =>
  withReleasedAndPatched(
    RELEASED_PORT,
    async (urls) => {
      const results: Record<string, unknown[]> = { asReleased: [], patched: [] };
      for (const size of SIZES) {
        results.asReleased!.push(await measure('as released', urls.released, size));
        results.patched!.push(await measure('patched', urls.patched, size));
      }
      writeResults('ferretdb-id-lookup', {
        change: {
          file: `${FERRETDB}@${VERSION} internal/backends/sqlite/metadata/metadata.go`,
          patch: 'scripts/infra/ferretdb/patches/sqlite-id-index.patch',
          from: AS_RELEASED,
          to: PATCHED,
        },
        lookups: LOOKUPS,
        results,
        note: 'findOne timings in ms; misses counts lookups that did not return the document asked for',
      });
    },
    checkReleasedIdColumn,
  ),
);
