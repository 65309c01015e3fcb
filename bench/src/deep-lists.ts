/**
 * Benchmark 4, deep lists: a service with 100,000 deployments; the first page and a page
 * 50,000 deep (its cursor made the way the service makes it: encodeCursor from @platform/shared
 * with the item's place in the service's timeline), each to answer at p99 under 20 ms, the
 * query using an index.
 *
 * The project and service come from the API; the stack is then stopped, the deployments (with
 * their timeline entries, transitions and leases, lib/seed.ts) are written straight into
 * bench_deployments, and the stack started again, so seeding does not race the stack's own
 * polling. Measured through HTTP, straight to the deployments service with a signed identity
 * (the query is the subject; the gateway's share is benchmark 1's), then through the gateway.
 * Requests are sampled one after another, interleaved (one of each kind per round, so all
 * kinds meet the same background), bounded by count and time.
 *
 * Then the same pages at the database, with the service's own repository
 * (DeploymentsRepository.listInService: the timeline, then the deployments, then their status
 * changes, each one `_id $in`): the number of queries a page sends, their `explain` (FerretDB's
 * pushdown flags and SQLite's plan) and their times, plus SQLite's own plan for an `_id` lookup.
 */
import { encodeCursor, writeWithoutRelay } from '@platform/shared';
import { Types, type Query } from 'mongoose';
import { BrowserClient, directGet, identityHeader, uniqueEmail } from './lib/client';
import { cpuMeter, infraPids } from './lib/cpu';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { explainFind, repeat } from './lib/probes';
import { verdict, writeResults } from './lib/results';
import { deploymentModels } from '@platform/deployments/dist/deployments/deployments.model';
import { DeploymentsRepository } from '@platform/deployments/dist/deployments/deployments.repository';
import { descendingSeqs } from '@platform/deployments/dist/deployments/deployments.timeline';
import { DOCUMENTS_PER_DEPLOYMENT, seedDeployments } from './lib/seed';
import { sqliteIdPlans } from './lib/sqlite';
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

  // The page after the DEPTH-th newest deployment, as the service would have encoded it; and
  // as a cursor made before the timeline encoded it (the service reads its place from it).
  const position = seeded[DEPTH - 1]!;
  const cursor = encodeCursor({
    createdAt: position.createdAt,
    id: position.id,
    seq: position.seq,
  });
  const oldCursor = encodeCursor({ createdAt: position.createdAt, id: position.id });
  const urls = {
    first: `${stack.deployments}${listPath}?limit=${PAGE}`,
    deep: `${stack.deployments}${listPath}?limit=${PAGE}&cursor=${cursor}`,
    deepOldCursor: `${stack.deployments}${listPath}?limit=${PAGE}&cursor=${oldCursor}`,
  };
  const identity = identityHeader(accountId, stack.internalSecret, 6 * 3600);

  // Correctness first: the pages are the ones expected.
  const expected = (from: number) => seeded.slice(from, from + PAGE).map((d) => d.id);
  const pages = {
    first: await directGet(urls.first, identity),
    deep: await directGet(urls.deep, identity),
    deepOldCursor: await directGet(urls.deepOldCursor, identity),
  };
  const idsOf = (page: { body?: any }) =>
    (page.body?.deployments ?? []).map((d: { id: string }) => d.id);
  const pagesRight =
    Object.values(pages).every((p) => p.status === 200 && typeof p.body?.nextCursor === 'string') &&
    JSON.stringify(idsOf(pages.first)) === JSON.stringify(expected(0)) &&
    JSON.stringify(idsOf(pages.deep)) === JSON.stringify(expected(DEPTH)) &&
    JSON.stringify(idsOf(pages.deepOldCursor)) === JSON.stringify(expected(DEPTH)) &&
    pages.first.body.deployments.every((d: { status: string }) => d.status === 'DEPLOYED');
  say(`pages checked: ${pagesRight ? 'as expected' : 'NOT as expected'}`);
  if (!pagesRight) {
    throw new Error(
      `unexpected pages: ${pages.first.status} ${pages.deep.status} ${pages.deepOldCursor.status}`,
    );
  }

  const samplingMeter = cpuMeter(pids);
  const samplingStarted = Date.now();
  const direct = await sampleInterleaved(SAMPLES, {
    firstPage: () => directGet(urls.first, identity),
    deepPage: () => directGet(urls.deep, identity),
    deepPageOldCursor: () => directGet(urls.deepOldCursor, identity),
    // The service's floor for any request: the signed identity, the ownership check asked of
    // the projects service, an error answer (a malformed deployment id is 404 after the check).
    ownershipCheckOnly: () => directGet(`${stack.deployments}${listPath}/not-an-id`, identity),
  });
  const viaGateway = await sampleInterleaved(GATEWAY_SAMPLES, {
    firstPageViaGateway: () => client.get(`${listPath}?limit=${PAGE}`),
    deepPageViaGateway: () => client.get(`${listPath}?limit=${PAGE}&cursor=${cursor}`),
  });
  const samplingMs = Date.now() - samplingStarted;
  const samplingCpuShare = Object.fromEntries(
    Object.entries(samplingMeter.stop()).map(([name, used]) => [name, ms(used / samplingMs, 3)]),
  );
  say(`while sampling, CPU share (1 = one core): ${JSON.stringify(samplingCpuShare)}`);
  const http = { ...direct, ...viaGateway };

  // The same pages at the database, with the service's own repository on this connection.
  const models = deploymentModels(deploymentsDb);
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
  const listFirst = () => repository.listInService(ref, PAGE);
  const listDeep = () => repository.listInService(ref, PAGE, position.seq);
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

  // Each query of the pages, as listInService builds it: its plan and its time.
  const latest = seeded[0]!.seq;
  const firstSeqs = descendingSeqs(latest + 8, latest - (PAGE + 1));
  const deepSeqs = descendingSeqs(position.seq - 1, position.seq - (PAGE + 1));
  const deepIds = seeded.slice(DEPTH, DEPTH + PAGE + 1).map((d) => d.id);
  const pageQueries: Record<string, Query<unknown, unknown>> = {
    'timeline head (findById)': models.timelineHeads.findById(service.id, { seq: 1 }),
    [`timeline, first page: ${firstSeqs.length} keys from the head (_id $in)`]:
      repository.timeline.entriesQuery(service.id, firstSeqs),
    [`timeline, page ${DEPTH} deep: ${deepSeqs.length} keys (_id $in)`]:
      repository.timeline.entriesQuery(service.id, deepSeqs),
    [`deployments of the deep page: ${deepIds.length} (_id $in, no logs)`]:
      repository.deploymentsQuery(deepIds),
    [`status changes of the deep page: ${deepIds.length * 2} keys (_id $in)`]:
      repository.statusChangesQuery(deepIds),
    'the deployment a cursor made before the timeline names (findById)':
      models.deployments.findById(new Types.ObjectId(position.id), { logs: 0 }),
  };
  const database: Record<string, unknown> = {};
  for (const [name, query] of Object.entries(pageQueries)) {
    const collection = deploymentsDb.collection(query.model.collection.collectionName);
    const plan = await explainFind(collection, query.getFilter(), {
      projection: (query.projection() ?? undefined) as Record<string, number> | undefined,
    });
    const usesIndex = /USING INDEX|IDHACK|IXSCAN/.test(JSON.stringify(plan.sqlitePlan));
    const times = await repeat(DB_SAMPLES, () => query.clone().lean().exec());
    say(
      `db: ${name}: filterPushdown ${plan.filterPushdown}, index ${usesIndex}, ` +
        `p50 ${times.p50} ms, max ${times.max} ms`,
    );
    database[name] = { plan, usesIndex, ms: times };
  }
  const sqlitePlans = {
    deployments: await sqliteIdPlans(dbName(stack.stackName, 'deployments'), 'deployments'),
    deployment_timeline: await sqliteIdPlans(
      dbName(stack.stackName, 'deployments'),
      'deployment_timeline',
    ),
  };
  await mongoConnection.close();

  const indexed = Object.values(database).filter((q) => (q as { usesIndex: boolean }).usesIndex);
  const verdicts = [
    verdict('first page p99', http.firstPage!.p99, '<', 20, ' ms'),
    verdict(`page ${DEPTH} deep p99`, http.deepPage!.p99, '<', 20, ' ms'),
    verdict(
      `page queries whose plan uses an index (of ${Object.keys(database).length})`,
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
    sqliteIdLookup: sqlitePlans,
    verdicts,
  });
});
