/**
 * Benchmark 3, cascade: DELETE of a project with 100 services and 10,000 deployments.
 *
 * The project and its services are made through the API; the deployments (each one document
 * and its logs) are seeded into bench_deployments in the service's own document shape
 * (lib/seed.ts). Then, through the gateway: the DELETE's answer time, at once the four reads
 * (the project, a service, a service's deployment list, a deployment) that must all be 404, and
 * then how long until the documents are gone from MongoDB (projects, services, deployments,
 * logs), polled with cheap existence checks every 250 ms for at most 120 s.
 */
import { Types } from 'mongoose';
import { GatewayClient } from '@platform/shared/testing';
import { uniqueEmail } from './lib/client';
import { cpuShareAtRest, stackAndInfraPids } from './lib/cpu';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { probeOutboxSweep } from './lib/probes';
import { verdict, writeResults } from './lib/results';
import { DOCUMENTS_PER_DEPLOYMENT, seedDeployments } from './lib/seed';
import { main, startStack } from './lib/stack';
import { timed } from './lib/stats';
import { connectMongo, dbName, resetStack } from './lib/stores';

const SERVICES = intEnv('BENCH_SERVICES', 100);
const DEPLOYMENTS = intEnv('BENCH_DEPLOYMENTS', 10_000);
const GONE_LIMIT_S = intEnv('BENCH_GONE_LIMIT_S', 120);
const IDLE_S = intEnv('BENCH_IDLE_S', 10);

main('cascade', 1800, async () => {
  const stack = await startStack({ reset: resetStack });
  const client = new GatewayClient(stack.gateway);
  const accountId = (await client.signIn(uniqueEmail('cascade'))).body.id;
  const project = await client.expect(201, 'POST', '/api/projects', {
    name: `bench cascade ${Date.now()}`,
    description: 'A project with 100 services and 10,000 deployments, deleted at once.',
  });
  const projectPath = `/api/projects/${project.id}`;
  say(`creating ${SERVICES} services through the API`);
  const serviceIds: string[] = [];
  for (let i = 0; i < SERVICES; i++) {
    const service = await client.expect(201, 'POST', `${projectPath}/services`, {
      name: `service-${String(i).padStart(3, '0')}`,
    });
    serviceIds.push(service.id);
  }

  const mongo = await connectMongo(stack.mongoUrl);
  const deploymentsDb = mongo.useDb(dbName(stack.stackName, 'deployments'));
  const projectsDb = mongo.useDb(dbName(stack.stackName, 'projects'));
  say(`seeding ${DEPLOYMENTS} deployments into ${dbName(stack.stackName, 'deployments')}`);
  const seedTime = await timed(() =>
    seedDeployments(deploymentsDb, { accountId, projectId: project.id, serviceIds }, DEPLOYMENTS),
  );
  const seeded = seedTime.value;
  const service = serviceIds[0]!;
  const deployment = seeded.find((d) => d.serviceId === service)!;
  const reads = {
    project: projectPath,
    service: `${projectPath}/services/${service}`,
    deploymentList: `${projectPath}/services/${service}/deployments`,
    deployment: `${projectPath}/services/${service}/deployments/${deployment.id}`,
  };

  // The same reads before the delete: all 200, and what they cost with this much data.
  const before: Record<string, { status: number; ms: number }> = {};
  for (const [name, path] of Object.entries(reads)) {
    const answer = await timed(() => client.get(path));
    before[name] = { status: answer.value.status, ms: ms(answer.ms) };
    say(`before: GET ${name} → ${answer.value.status} in ${ms(answer.ms)} ms`);
    if (answer.value.status !== 200) throw new Error(`before the delete, ${name} was not 200`);
  }

  // The outbox relay's sweep on this many deployments (it runs every 5 s).
  const relayProbe = await probeOutboxSweep(deploymentsDb.collection('deployments'), 5);

  // What the stack costs at rest with this data: its polling loops scan the collections.
  const idleCpuShare = await cpuShareAtRest(await stackAndInfraPids(stack), IDLE_S);

  say('DELETE the project');
  const deleted = await timed(() => client.delete(projectPath));
  const deletedAt = Date.now();
  if (deleted.value.status !== 204) {
    throw new Error(
      `DELETE answered ${deleted.value.status} ${JSON.stringify(deleted.value.body)}`,
    );
  }
  say(`DELETE → 204 in ${ms(deleted.ms)} ms`);

  const after: Record<string, { status: number; ms: number }> = {};
  await Promise.all(
    Object.entries(reads).map(async ([name, path]) => {
      const answer = await timed(() => client.get(path));
      after[name] = { status: answer.value.status, ms: ms(answer.ms) };
    }),
  );
  for (const [name, a] of Object.entries(after)) {
    say(`after: GET ${name} → ${a.status} in ${a.ms} ms`);
  }

  // Existence checks stop at the first matching row, so they stay cheap while documents remain.
  const owned = { projectId: project.id };
  const projectObjectId = new Types.ObjectId(project.id);
  const remaining = {
    project: () => projectsDb.collection('projects').find({ _id: projectObjectId }).limit(1),
    services: () => projectsDb.collection('services').find({ projectId: projectObjectId }).limit(1),
    deployments: () => deploymentsDb.collection('deployments').find(owned).limit(1),
    logs: () => deploymentsDb.collection('deployment_logs').find(owned).limit(1),
  };
  const goneAfterMs: Record<string, number | null> = Object.fromEntries(
    Object.keys(remaining).map((k) => [k, null]),
  );
  const deadline = deletedAt + GONE_LIMIT_S * 1000;
  while (Date.now() < deadline && Object.values(goneAfterMs).some((v) => v === null)) {
    for (const [name, query] of Object.entries(remaining)) {
      if (goneAfterMs[name] !== null) continue;
      if ((await query().toArray()).length === 0) {
        goneAfterMs[name] = Date.now() - deletedAt;
        say(`${name}: gone ${goneAfterMs[name]} ms after the DELETE`);
      }
    }
    await sleep(250);
  }
  const counts = {
    projects: await projectsDb.collection('projects').countDocuments({ _id: projectObjectId }),
    services: await projectsDb
      .collection('services')
      .countDocuments({ projectId: projectObjectId }),
    deployments: await deploymentsDb.collection('deployments').countDocuments(owned),
    logs: await deploymentsDb.collection('deployment_logs').countDocuments(owned),
  };
  say(`left after the wait: ${JSON.stringify(counts)}`);
  const allGoneMs = Object.values(goneAfterMs).every((v) => v !== null)
    ? Math.max(...(Object.values(goneAfterMs) as number[]))
    : null;

  await mongo.close();

  const slowestRead = Math.max(...Object.values(after).map((a) => a.ms));
  const verdicts = [
    verdict('DELETE answer time', ms(deleted.ms), '<', 200, ' ms'),
    verdict(
      'reads answered 404 at once',
      Object.values(after).filter((a) => a.status === 404).length,
      '>=',
      4,
    ),
    verdict('documents gone after', allGoneMs ?? GONE_LIMIT_S * 1000 + 1, '<', 10_000, ' ms'),
  ];
  writeResults('cascade', {
    settings: {
      services: SERVICES,
      deployments: DEPLOYMENTS,
      documentsSeeded: DEPLOYMENTS * DOCUMENTS_PER_DEPLOYMENT,
    },
    seeding: { ms: Math.round(seedTime.ms), documents: DEPLOYMENTS * DOCUMENTS_PER_DEPLOYMENT },
    summary: {
      deleteMs: ms(deleted.ms),
      readsAfterDelete: after,
      slowestReadAfterDeleteMs: slowestRead,
      goneAfterMs,
      allGoneMs,
      remainingAfterWait: counts,
    },
    readsBeforeDelete: before,
    atRestCpuShare: idleCpuShare,
    outboxRelay: relayProbe,
    verdicts,
  });
});
