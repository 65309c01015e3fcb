/**
 * Benchmark 4, deep lists: a service with 100,000 deployments; the first page and a page
 * 50,000 deep (its cursor made the way the service makes it: encodeCursor from @platform/shared
 * with the position `{createdAt, id}` of the item before), each to answer at p99 under 20 ms,
 * the query using an index.
 *
 * The project and service come from the API; the stack is then stopped, the deployments (each
 * one document and its logs, lib/seed.ts) are written straight into bench_deployments, and the
 * stack started again, so seeding does not race the stack's own polling. Measured through HTTP,
 * straight to the deployments service with a signed identity (the query is the subject; the
 * gateway's share is benchmark 1's), then through the gateway. Requests are sampled one after
 * another, interleaved (one of each kind per round, so all kinds meet the same background),
 * bounded by count and time.
 *
 * Then the same pages at the database, with the service's own repository
 * (DeploymentsRepository.listInService: one keyset `find` through findPage, sorted
 * `{createdAt: -1, _id: -1}`, limit + 1): the queries a page sends, the `explain` of each page
 * query (with and without `?status=`) and of a single deployment's reads (FerretDB's pushdown
 * flags and SQLite's plan, or MongoDB's winning plan), their times, and the SQLite indexes of
 * the collections.
 */
import {
  NEWEST_FIRST,
  afterCursorFilter,
  encodeCursor,
  parseCursor,
  writeWithoutRelay,
} from '@platform/shared';
import { Types, type mongo } from 'mongoose';
import { requestJson } from '@platform/shared/testing';
import { clientWithService } from './lib/client';
import { cpuMeter, cpuShare, cpuShareAtRest, stackAndInfraPids } from './lib/cpu';
import { intEnv } from './lib/env';
import { say } from './lib/log';
import { explainFind, repeat } from './lib/probes';
import { verdict, writeResults } from './lib/results';
import { createModels } from '@platform/deployments/dist/models';
import { DeploymentsRepository } from '@platform/deployments/dist/deployments/deployments.repository';
import { DOCUMENTS_PER_DEPLOYMENT, seedDeployments } from './lib/seed';
import { sqliteIndexes } from './lib/sqlite';
import { main, startStack } from './lib/stack';
import { distribution, timed } from './lib/stats';
import { connectMongo, dbName, resetStack } from './lib/stores';

const DEPLOYMENTS = intEnv('BENCH_DEPLOYMENTS', 100_000);
const DEPTH = intEnv('BENCH_DEPTH', 50_000);
const PAGE = 20;
const SAMPLES = intEnv('BENCH_LIST_SAMPLES', 500);
const GATEWAY_SAMPLES = intEnv('BENCH_GATEWAY_SAMPLES', 100);
const SAMPLE_LIMIT_S = intEnv('BENCH_LIST_LIMIT_S', 120);
const DB_SAMPLES = intEnv('BENCH_DB_SAMPLES', 100);
const IDLE_S = intEnv('BENCH_IDLE_S', 10);

/**
 * Requests one after another, in rounds of one of each kind, so every kind meets the same
 * background (the stack's periodic scans, the neighbours' load): at most `count` rounds and at
 * most SAMPLE_LIMIT_S seconds' worth.
 */
async function sampleInterleaved(
  count: number,
  requests: Record<string, () => Promise<{ status: number }>>,
) {
  const durations = Object.fromEntries(Object.keys(requests).map((k) => [k, [] as number[]]));
  const statuses = Object.fromEntries(
    Object.keys(requests).map((k) => [k, {} as Record<string, number>]),
  );
  const deadline = Date.now() + SAMPLE_LIMIT_S * 1000;
  for (let round = 0; round < count && Date.now() < deadline; round++) {
    for (const [name, request] of Object.entries(requests)) {
      const { value, ms: took } = await timed(request);
      durations[name]!.push(took);
      statuses[name]![value.status] = (statuses[name]![value.status] ?? 0) + 1;
    }
  }
  const results = Object.fromEntries(
    Object.keys(requests).map((name) => [
      name,
      { ...distribution(durations[name]!), statuses: statuses[name]! },
    ]),
  );
  for (const [name, result] of Object.entries(results)) say(`${name}: ${JSON.stringify(result)}`);
  return results;
}

main('deep-lists', 3600, async () => {
  let stack = await startStack({ reset: resetStack });
  const { client, accountId, project, service } = await clientWithService(
    stack.gateway,
    'lists',
    'busy',
  );
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
  const pids = await stackAndInfraPids(stack);
  const atRestCpuShare = await cpuShareAtRest(pids, IDLE_S);

  // The page after the DEPTH-th newest deployment, as the service would have encoded it.
  const position = seeded[DEPTH - 1]!;
  const cursor = encodeCursor({ createdAt: position.createdAt, id: position.id });
  const urls = {
    first: `${stack.deployments}${listPath}?limit=${PAGE}`,
    deep: `${stack.deployments}${listPath}?limit=${PAGE}&cursor=${cursor}`,
  };
  // requestJson signs each request for deployments, its method and path (60 s, one request).
  const identity = {
    accountId,
    audience: 'deployments',
    secret: stack.internalSecret,
  } as const;

  // Correctness first: the pages are the ones expected.
  const expected = (from: number) => seeded.slice(from, from + PAGE).map((d) => d.id);
  const pages = {
    first: await requestJson(urls.first, { identity }),
    deep: await requestJson(urls.deep, { identity }),
  };
  const idsOf = (page: { body?: any }) =>
    (page.body?.deployments ?? []).map((d: { id: string }) => d.id);
  const pagesRight =
    Object.values(pages).every((p) => p.status === 200 && typeof p.body?.nextCursor === 'string') &&
    JSON.stringify(idsOf(pages.first)) === JSON.stringify(expected(0)) &&
    JSON.stringify(idsOf(pages.deep)) === JSON.stringify(expected(DEPTH)) &&
    pages.first.body.deployments.every((d: { status: string }) => d.status === 'DEPLOYED');
  say(`pages checked: ${pagesRight ? 'as expected' : 'NOT as expected'}`);
  if (!pagesRight) {
    throw new Error(`unexpected pages: ${pages.first.status} ${pages.deep.status}`);
  }

  const samplingMeter = cpuMeter(pids);
  const samplingStarted = Date.now();
  const direct = await sampleInterleaved(SAMPLES, {
    firstPage: () => requestJson(urls.first, { identity }),
    deepPage: () => requestJson(urls.deep, { identity }),
    // The service's floor for any request: the signed identity, the ownership check asked of
    // the projects service, an error answer (a malformed deployment id is 404 after the check).
    ownershipCheckOnly: () =>
      requestJson(`${stack.deployments}${listPath}/not-an-id`, { identity }),
  });
  const viaGateway = await sampleInterleaved(GATEWAY_SAMPLES, {
    firstPageViaGateway: () => client.get(`${listPath}?limit=${PAGE}`),
    deepPageViaGateway: () => client.get(`${listPath}?limit=${PAGE}&cursor=${cursor}`),
  });
  const samplingMs = Date.now() - samplingStarted;
  const samplingCpuShare = cpuShare(samplingMeter.stop(), samplingMs);
  say(`while sampling, CPU share (1 = one core): ${JSON.stringify(samplingCpuShare)}`);
  const http = { ...direct, ...viaGateway };

  // The same pages at the database, with the service's own repository on this connection.
  const models = createModels(deploymentsDb);
  const repository = new DeploymentsRepository(models, writeWithoutRelay);
  const ref = { accountId, projectId: project.id, serviceId: service.id };
  const sent: string[] = [];
  deploymentsDb.set('debug', (collection: string, method: string) => {
    sent.push(`${collection}.${method}`);
  });
  const queriesOf = async (list: () => Promise<unknown>) => {
    sent.length = 0;
    await list();
    return [...sent];
  };
  const listFirst = () => repository.listInService(ref, { limit: PAGE });
  const listDeep = () => repository.listInService(ref, { limit: PAGE, cursor });
  const queriesPerPage = {
    first: await queriesOf(listFirst),
    deep: await queriesOf(listDeep),
  };
  deploymentsDb.set('debug', false);
  say(`db: a first page sends ${queriesPerPage.first.length} queries: ${queriesPerPage.first}`);
  say(`db: a deep page sends ${queriesPerPage.deep.length} queries: ${queriesPerPage.deep}`);
  const pageTimes = {
    first: await repeat(DB_SAMPLES, listFirst),
    deep: await repeat(DB_SAMPLES, listDeep),
  };
  say(`db: listInService first p50 ${pageTimes.first.p50} ms, deep p50 ${pageTimes.deep.p50} ms`);

  // Each page query as findPage builds it (filter, then the keyset range after the cursor,
  // newest first, limit + 1), and a single deployment's two reads (GET of one deployment).
  const after = afterCursorFilter(parseCursor(cursor));
  const ofService = repository.listFilter(ref);
  const deployed = repository.listFilter(ref, ['DEPLOYED']);
  const page = { sort: NEWEST_FIRST, limit: PAGE + 1 };
  const deploymentsCollection = deploymentsDb.collection(models.deployments.collection.name);
  const logsCollection = deploymentsDb.collection(models.logs.collection.name);
  const queries: Record<
    string,
    { collection: mongo.Collection; filter: mongo.Document; sort?: mongo.Document; limit?: number }
  > = {
    'first page': { collection: deploymentsCollection, filter: ofService, ...page },
    [`page ${DEPTH} deep`]: {
      collection: deploymentsCollection,
      filter: { ...ofService, ...after },
      ...page,
    },
    'first page, ?status=DEPLOYED': {
      collection: deploymentsCollection,
      filter: deployed,
      ...page,
    },
    [`page ${DEPTH} deep, ?status=DEPLOYED`]: {
      collection: deploymentsCollection,
      filter: { ...deployed, ...after },
      ...page,
    },
    'one deployment (GET): {_id, accountId, projectId, serviceId}': {
      collection: deploymentsCollection,
      filter: { _id: new Types.ObjectId(position.id), ...ref },
    },
    'its logs (GET): {_id, accountId}': {
      collection: logsCollection,
      filter: { _id: position.id, accountId },
    },
  };
  const database: Record<string, unknown> = {};
  for (const [name, q] of Object.entries(queries)) {
    const plan = await explainFind(q.collection, q.filter, { sort: q.sort, limit: q.limit });
    const times = await repeat(DB_SAMPLES, () => {
      let found = q.collection.find(q.filter);
      if (q.sort) found = found.sort(q.sort);
      if (q.limit) found = found.limit(q.limit);
      return found.toArray();
    });
    say(
      `db: ${name}: index ${plan.index ?? 'none'}, pushdown filter/sort/limit ` +
        `${plan.filterPushdown}/${plan.sortPushdown}/${plan.limitPushdown}, ` +
        `p50 ${times.p50} ms, p99 ${times.p99} ms`,
    );
    database[name] = { plan, ms: times };
  }
  const sqlite = {
    deployments: await sqliteIndexes(dbName(stack.stackName, 'deployments'), 'deployments'),
    deployment_logs: await sqliteIndexes(dbName(stack.stackName, 'deployments'), 'deployment_logs'),
  };
  await mongoConnection.close();

  const indexed = Object.values(database).filter(
    (q) => (q as { plan: { usesIndex: boolean } }).plan.usesIndex,
  );
  const verdicts = [
    verdict('first page p99', http.firstPage!.p99, '<', 20, ' ms'),
    verdict(`page ${DEPTH} deep p99`, http.deepPage!.p99, '<', 20, ' ms'),
    verdict(
      `queries whose plan uses an index (of ${Object.keys(database).length})`,
      indexed.length,
      '>=',
      Object.keys(database).length,
    ),
  ];
  writeResults('deep-lists', {
    settings: {
      deployments: DEPLOYMENTS,
      depth: DEPTH,
      pageSize: PAGE,
      samples: SAMPLES,
      gatewaySamples: GATEWAY_SAMPLES,
      dbSamples: DB_SAMPLES,
    },
    seeding: { ms: Math.round(seedTime.ms), documents: DEPLOYMENTS * DOCUMENTS_PER_DEPLOYMENT },
    summary: { http, atRestCpuShare, samplingCpuShare, queriesPerPage, listInServiceMs: pageTimes },
    database,
    sqliteIndexes: sqlite,
    verdicts,
  });
});
