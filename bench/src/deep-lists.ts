/**
 * Benchmark 4, deep lists: a service with 100,000 deployments; the first page and a page
 * 50,000 deep (its cursor made the way the service makes it, encodeCursor from @platform/shared),
 * each to answer at p99 under 20 ms.
 *
 * The project and service come from the API; the stack is then stopped, the deployments (with
 * their transitions and leases, lib/seed.ts) are written straight into bench_deployments, and
 * the stack started again, so seeding does not race the stack's own polling. Measured through
 * HTTP, straight to the deployments service with a signed identity (the query is the subject;
 * the gateway's share is benchmark 1's), then once through the gateway. Requests that take
 * seconds are sampled one after another, bounded by count and time.
 *
 * Then the same data at the database: `explain` of the queries the service sends, and the
 * shapes one could send instead, timed with the driver: an `_id` keyset (ObjectIds are
 * time-ordered, so `_id` order is creation order) and `_id` equality, the only filter FerretDB
 * 1.24 hands to SQLite, plus SQLite's own plan for that lookup.
 */
import { encodeCursor } from '@platform/shared';
import { Types, mongo } from 'mongoose';
import { BrowserClient, directGet, identityHeader, uniqueEmail } from './lib/client';
import { cpuMeter, infraPids } from './lib/cpu';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { explainFind, repeat } from './lib/probes';
import { verdict, writeResults } from './lib/results';
import {
  deploymentModels,
  transitionId,
} from '@platform/deployments/dist/deployments/deployments.model';
import { DOCUMENTS_PER_DEPLOYMENT, seedDeployments } from './lib/seed';
import { sqliteIdPlans } from './lib/sqlite';
import { main, startStack } from './lib/stack';
import { distribution, timed } from './lib/stats';
import { connectMongo, dbName, resetStack } from './lib/stores';

const DEPLOYMENTS = intEnv('BENCH_DEPLOYMENTS', 100_000);
const DEPTH = intEnv('BENCH_DEPTH', 50_000);
const PAGE = 20;
const SAMPLES = intEnv('BENCH_LIST_SAMPLES', 5);
const SAMPLE_LIMIT_S = intEnv('BENCH_LIST_LIMIT_S', 240);
const DB_SAMPLES = intEnv('BENCH_DB_SAMPLES', 3);
const IDLE_S = intEnv('BENCH_IDLE_S', 10);

/** Sequential requests, at most `count` and at most SAMPLE_LIMIT_S seconds' worth. */
async function sample(label: string, count: number, request: () => Promise<{ status: number }>) {
  const durations: number[] = [];
  const statuses: Record<string, number> = {};
  const deadline = Date.now() + SAMPLE_LIMIT_S * 1000;
  while (durations.length < count && Date.now() < deadline) {
    const { value, ms: took } = await timed(request);
    durations.push(took);
    statuses[value.status] = (statuses[value.status] ?? 0) + 1;
    say(`${label}: ${value.status} in ${ms(took)} ms`);
  }
  return { ...distribution(durations), statuses };
}

main('deep-lists', 3600, async () => {
  let stack = await startStack({ reset: resetStack });
  const client = new BrowserClient(stack.gateway);
  const accountId = await client.signIn(uniqueEmail('lists'));
  const project = await client.expect(201, 'POST', '/api/projects', {
    name: `bench lists ${Date.now()}`,
  });
  const service = await client.expect(201, 'POST', `/api/projects/${project.id}/services`, {
    name: 'busy',
  });
  const listPath = `/api/projects/${project.id}/services/${service.id}/deployments`;

  // Seeding with the stack stopped: its pollers would scan the growing collections meanwhile.
  await stack.stop();
  const mongoConnection = await connectMongo(stack.mongoUrl);
  const deploymentsDb = mongoConnection.useDb(dbName(stack.stackName, 'deployments'));
  say(`seeding ${DEPLOYMENTS} deployments of one service (stack stopped)`);
  const seedTime = await timed(() =>
    seedDeployments(
      deploymentsDb,
      { accountId, projectId: project.id, serviceIds: [service.id] },
      DEPLOYMENTS,
      { batch: 2_000 },
    ),
  );
  const seeded = seedTime.value;
  stack = await startStack();

  // The stack at rest with this data.
  const pids = { ...stack.pids, ...(await infraPids()) };
  say(`measuring ${IDLE_S} s at rest`);
  const meter = cpuMeter(pids);
  await sleep(IDLE_S * 1000);
  const idle = meter.stop();
  const atRestCpuShare = Object.fromEntries(
    Object.entries(idle).map(([name, used]) => [name, ms(used / (IDLE_S * 1000), 3)]),
  );
  say(`at rest, CPU share (1 = one core): ${JSON.stringify(atRestCpuShare)}`);

  // The page after the DEPTH-th newest deployment, as the service would have encoded it.
  const position = seeded[DEPTH - 1]!;
  const cursor = encodeCursor({ createdAt: position.createdAt, id: position.id });
  const urls = {
    first: `${stack.deployments}${listPath}?limit=${PAGE}`,
    deep: `${stack.deployments}${listPath}?limit=${PAGE}&cursor=${cursor}`,
  };
  const identity = identityHeader(accountId, stack.internalSecret, 6 * 3600);

  // Correctness first: the pages are the ones expected.
  const firstPage = await directGet(urls.first, identity);
  const deepPage = await directGet(urls.deep, identity);
  const firstIds = (firstPage.body?.deployments ?? []).map((d: { id: string }) => d.id);
  const deepIds = (deepPage.body?.deployments ?? []).map((d: { id: string }) => d.id);
  const pagesRight =
    firstPage.status === 200 &&
    deepPage.status === 200 &&
    firstIds[0] === seeded[0]!.id &&
    deepIds[0] === seeded[DEPTH]!.id &&
    deepIds.length === PAGE &&
    typeof deepPage.body?.nextCursor === 'string';
  say(`pages checked: ${pagesRight ? 'as expected' : 'NOT as expected'}`);
  if (!pagesRight) {
    throw new Error(`unexpected pages: ${firstPage.status} ${deepPage.status} ${firstIds[0]}`);
  }

  const http = {
    firstPage: await sample('first page (direct)', SAMPLES, () => directGet(urls.first, identity)),
    deepPage: await sample(`page ${DEPTH} deep (direct)`, SAMPLES, () =>
      directGet(urls.deep, identity),
    ),
    firstPageViaGateway: await sample('first page (gateway)', 2, () =>
      client.get(`${listPath}?limit=${PAGE}`),
    ),
  };

  // The same questions at the database, timed with the driver.
  const deployments = deploymentsDb.collection('deployments');
  const transitions = deploymentsDb.collection('deployment_transitions');
  const ref = { accountId, projectId: project.id, serviceId: service.id };
  const positionId = new Types.ObjectId(position.id);
  const newestFirst = { createdAt: -1, _id: -1 } as const;
  const afterCursor = {
    $or: [
      { createdAt: { $lt: position.createdAt } },
      { createdAt: position.createdAt, _id: { $lt: positionId } },
    ],
  };
  const pageIds = seeded.slice(DEPTH, DEPTH + PAGE + 1).map((d) => d.id);
  const shapes: Record<
    string,
    {
      on: 'deployments' | 'transitions';
      filter: mongo.Document;
      sort?: mongo.Document;
      limit?: number;
    }
  > = {
    'service: first page (listInService)': {
      on: 'deployments',
      filter: ref,
      sort: newestFirst,
      limit: PAGE + 1,
    },
    'service: deep page (listInService + afterCursorFilter)': {
      on: 'deployments',
      filter: { ...ref, ...afterCursor },
      sort: newestFirst,
      limit: PAGE + 1,
    },
    'service: a deployment (findInService, by _id)': {
      on: 'deployments',
      filter: { _id: new Types.ObjectId(pageIds[0]) },
    },
    'service: a transition (withStatus, by _id)': {
      on: 'transitions',
      filter: { _id: transitionId(pageIds[0]!, 'BUILDING') },
    },
    'alternative: _id keyset, first page': {
      on: 'deployments',
      filter: { serviceId: service.id },
      sort: { _id: -1 },
      limit: PAGE + 1,
    },
    'alternative: _id keyset, deep page': {
      on: 'deployments',
      filter: { serviceId: service.id, _id: { $lt: positionId } },
      sort: { _id: -1 },
      limit: PAGE + 1,
    },
    'alternative: bare _id range': {
      on: 'deployments',
      filter: { _id: { $lt: positionId } },
      limit: PAGE + 1,
    },
  };
  const database: Record<string, unknown> = {};
  for (const [name, shape] of Object.entries(shapes)) {
    const collection = shape.on === 'transitions' ? transitions : deployments;
    const plan = await explainFind(collection, shape.filter, shape);
    say(`db: ${name}: filterPushdown ${plan.filterPushdown}, sortPushdown ${plan.sortPushdown}`);
    const times = await repeat(DB_SAMPLES, async () => {
      let find = collection.find(shape.filter, { projection: { logs: 0, outbox: 0 } });
      if (shape.sort) find = find.sort(shape.sort);
      if (shape.limit) find = find.limit(shape.limit);
      return find.toArray();
    });
    say(`db: ${name}: p50 ${times.p50} ms, max ${times.max} ms`);
    database[name] = { plan, ms: times };
  }
  const models = deploymentModels(deploymentsDb);
  // The rest of a page as the service builds it: each row's status follows its transitions by
  // _id (withStatus: BUILDING's, then DEPLOYING's), all rows at once.
  const statuses = await repeat(DB_SAMPLES, () =>
    Promise.all(
      pageIds.map(async (id) => {
        await models.transitions.findById(transitionId(id, 'BUILDING'), { to: 1 }).lean();
        await models.transitions.findById(transitionId(id, 'DEPLOYING'), { to: 1 }).lean();
      }),
    ),
  );
  say(`db: statuses of a page (${PAGE + 1} × 2 _id reads): p50 ${statuses.p50} ms`);
  database[`service: statuses of a page (withStatus × ${PAGE + 1}, in parallel)`] = {
    ms: statuses,
  };
  const sqlitePlans = await sqliteIdPlans(dbName(stack.stackName, 'deployments'), 'deployments');
  await mongoConnection.close();

  const verdicts = [
    verdict('first page p99', http.firstPage.p99, '<', 20, ' ms'),
    verdict(`page ${DEPTH} deep p99`, http.deepPage.p99, '<', 20, ' ms'),
  ];
  writeResults('deep-lists', {
    settings: { deployments: DEPLOYMENTS, depth: DEPTH, pageSize: PAGE, samples: SAMPLES },
    seeding: { ms: Math.round(seedTime.ms), documents: DEPLOYMENTS * DOCUMENTS_PER_DEPLOYMENT },
    summary: { http, atRestCpuShare },
    database,
    sqliteIdLookup: sqlitePlans,
    verdicts,
  });
});
