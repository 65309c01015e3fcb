/**
 * What our FerretDB patches (scripts/infra/ferretdb/patches/) change, side by side in one run:
 * FerretDB 1.24 as released (built into a temporary directory, without the patches, on
 * 127.0.0.1:27048) against the benchmark's FerretDB as scripts/infra builds it (patched).
 *
 * - atomic-writes: races of 2 and 8 concurrent findOneAndUpdate({_id, status: 'BUILDING'}) over
 *   200 rounds (how many rounds have exactly one winner), and 50 optimistic writers incrementing
 *   one counter 1,000 times (value reached vs successes reported);
 * - update throughput: updateOne by `_id` from 16 concurrent clients for BENCH_UPDATE_S seconds;
 * - update-duplicate-key: the code of an updateOne that breaks a unique index;
 * - sqlite-index-pushdown: a 21-row list page of BENCH_LIST_DOCS deployments of one service
 *   (`find({serviceId}).sort({createdAt: -1, _id: -1})`), first page and a keyset page
 *   BENCH_DEPTH deep, with their plans; the pipeline claim's `status: {$in: [...]}` read.
 * Nothing in the repository or the shared servers is changed; the build, its data and the
 * scratch databases are removed at the end. Needs Go (scripts/infra already does).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Types, type mongo } from 'mongoose';
import { REPO_ROOT, intEnv } from './lib/env';
import { say } from './lib/log';
import { explainFind, repeat } from './lib/probes';
import { writeResults } from './lib/results';
import { withReleasedAndPatched } from './lib/ferretdb-released';
import { main } from './lib/stack';
import { connectMongo } from './lib/stores';

const RELEASED_PORT = 27048;
const ROUNDS = intEnv('BENCH_ROUNDS', 200);
const UPDATE_S = intEnv('BENCH_UPDATE_S', 5);
const LIST_DOCS = intEnv('BENCH_LIST_DOCS', 100_000);
const DEPTH = intEnv('BENCH_DEPTH', 50_000);
const DB = 'bench_scratch_ferretdb_patches';
const PATCHES_DIR = path.join(REPO_ROOT, 'scripts/infra/ferretdb/patches');

async function races(url: string) {
  const connections = await Promise.all(Array.from({ length: 8 }, () => connectMongo(url)));
  const coll = (i: number) => connections[i]!.useDb(DB).collection('races');
  const winners: Record<string, number> = {};
  for (const contenders of [2, 8]) {
    let exact = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const _id = new Types.ObjectId();
      await coll(0).insertOne({ _id, status: 'BUILDING' });
      const results = await Promise.all(
        Array.from({ length: contenders }, (_, i) =>
          coll(i).findOneAndUpdate({ _id, status: 'BUILDING' }, { $set: { status: `X${i}` } }),
        ),
      );
      if (results.filter((r) => r !== null).length === 1) exact++;
    }
    winners[`${contenders}`] = exact;
  }
  await coll(0).insertOne({ _id: 'counter' as never, v: 0 });
  let successes = 0;
  await Promise.all(
    Array.from({ length: 50 }, async (_, w) => {
      for (let k = 0; k < 20; k++) {
        for (;;) {
          const current = await coll(w % 8).findOne({ _id: 'counter' as never });
          const r = await coll(w % 8).updateOne(
            { _id: 'counter' as never, v: current!.v },
            { $set: { v: current!.v + 1 } },
          );
          if (r.modifiedCount === 1) {
            successes++;
            break;
          }
        }
      }
    }),
  );
  const counter = (await coll(0).findOne({ _id: 'counter' as never }))!.v as number;
  await Promise.all(connections.map((c) => c.close()));
  return { rounds: ROUNDS, exactlyOneWinner: winners, counter: { successes, value: counter } };
}

async function updates(url: string) {
  const connection = await connectMongo(url);
  const coll = connection.useDb(DB).collection('updates');
  const ids = Array.from({ length: 1_000 }, () => new Types.ObjectId());
  await coll.insertMany(ids.map((_id) => ({ _id, n: 0 })));
  let ops = 0;
  const end = Date.now() + UPDATE_S * 1000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < end) {
        await coll.updateOne(
          { _id: ids[Math.floor(Math.random() * ids.length)] },
          { $inc: { n: 1 } },
        );
        ops++;
      }
    }),
  );
  const users = connection.useDb(DB).collection('users');
  await users.createIndex({ email: 1 }, { unique: true });
  await users.insertMany([{ email: 'a' }, { email: 'b' }]);
  const duplicateCode = await users.updateOne({ email: 'b' }, { $set: { email: 'a' } }).then(
    () => null,
    (e: { code?: number }) => e.code ?? null,
  );
  await connection.close();
  return {
    clients: 16,
    seconds: UPDATE_S,
    updatesPerSecond: Math.round(ops / UPDATE_S),
    duplicateCode,
  };
}

async function lists(url: string, samples: number) {
  const connection = await connectMongo(url);
  const deployments = connection.useDb(DB).collection('deployments');
  await deployments.createIndex({ serviceId: 1, createdAt: -1, _id: -1 });
  await deployments.createIndex({ status: 1, createdAt: 1 });
  const service = 's'.repeat(24);
  const now = Date.now();
  for (let from = 0; from < LIST_DOCS; from += 5_000) {
    const docs: mongo.Document[] = [];
    for (let i = from; i < Math.min(LIST_DOCS, from + 5_000); i++) {
      docs.push({
        _id: new Types.ObjectId(),
        serviceId: service,
        status: i === LIST_DOCS - 3 ? 'BUILDING' : 'DEPLOYED',
        commitMessage: `Seeded commit ${i}`,
        createdAt: new Date(now - (LIST_DOCS - i) * 60_000),
      });
    }
    await deployments.insertMany(docs, { ordered: false });
  }
  const sort = { createdAt: -1, _id: -1 } as const;
  const page = (filter: mongo.Document) => deployments.find(filter).sort(sort).limit(21).toArray();
  const [cursor] = await deployments
    .find({ serviceId: service })
    .sort(sort)
    .skip(DEPTH)
    .limit(1)
    .toArray();
  const deep = {
    serviceId: service,
    $or: [
      { createdAt: { $lt: cursor!.createdAt } },
      { createdAt: cursor!.createdAt, _id: { $lt: cursor!._id } },
    ],
  };
  const check = await page(deep);
  if (check.length !== 21 || +check[0]!.createdAt >= +cursor!.createdAt)
    throw new Error('the deep keyset page is not the one expected');
  const claim = { status: { $in: ['BUILDING', 'DEPLOYING'] } };
  const result = {
    documents: LIST_DOCS,
    depth: DEPTH,
    firstPage: await repeat(samples, () => page({ serviceId: service })),
    deepPage: await repeat(samples, () => page(deep)),
    claimFind: await repeat(samples, () =>
      deployments.find(claim).sort({ createdAt: 1 }).limit(1).toArray(),
    ),
    plans: {
      firstPage: await explainFind(deployments, { serviceId: service }, { sort, limit: 21 }),
      deepPage: await explainFind(deployments, deep, { sort, limit: 21 }),
      claim: await explainFind(deployments, claim, { sort: { createdAt: 1 }, limit: 1 }),
    },
  };
  await connection.close();
  return result;
}

async function measure(label: string, url: string, listSamples: number) {
  const connection = await connectMongo(url);
  await connection.useDb(DB).dropDatabase();
  const result = {
    races: await races(url),
    updates: await updates(url),
    lists: await lists(url, listSamples),
  };
  await connection.useDb(DB).dropDatabase();
  await connection.close();
  say(
    `${label}: one winner of 2/8 in ${result.races.exactlyOneWinner['2']}/${result.races.exactlyOneWinner['8']} of ${ROUNDS}, ` +
      `counter ${result.races.counter.value}/${result.races.counter.successes}, ` +
      `${result.updates.updatesPerSecond} updates/s, duplicate code ${result.updates.duplicateCode}, ` +
      `first page p50 ${result.lists.firstPage.p50} ms, ${DEPTH} deep p50 ${result.lists.deepPage.p50} ms`,
  );
  return result;
}

main('ferretdb-patches', 1200, () =>
  withReleasedAndPatched(RELEASED_PORT, async (urls) => {
    const asReleased = await measure('as released', urls.released, 2);
    const patched = await measure('patched', urls.patched, 10);
    writeResults('ferretdb-patches', {
      patches: readdirSync(PATCHES_DIR)
        .filter((name) => name.endsWith('.patch'))
        .sort()
        .map((name) => `scripts/infra/ferretdb/patches/${name}`),
      asReleased,
      patched,
      note: 'races: rounds (of `rounds`) in which exactly one of 2 / 8 concurrent findOneAndUpdate matched; counter: value reached after 1,000 reported successes; timings in ms',
    });
  }),
);
