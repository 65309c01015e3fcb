/**
 * Benchmark 2, event latency: from a deployment's status change being written to its signed
 * webhook arriving at a receiver on 127.0.0.1, over 500 changes.
 *
 * The clock starts at the event's `occurredAt`, which the webhook carries as `timestamp`: the
 * deployments service stamps each status change with the time it writes it (`changeStatus` in
 * services/deployments/src/deployments/deployments.repository.ts, the same `at` as the
 * deployment's `statusChangedAt`; the creation's is its `createdAt`), and webhooks'
 * `statusChangedBody` copies it into the payload. It stops when the receiver has the whole body;
 * every signature is checked.
 *
 * BUILD_COMMAND and DEPLOY_COMMAND are `true`, so each deployment makes three changes
 * (BUILDING, DEPLOYING, DEPLOYED) within milliseconds; BENCH_IN_FLIGHT deployments (default 2,
 * the pipeline's concurrency) run at a time. For the breakdown, a Kafka consumer of our own
 * notes when each event was published, and the delivery records give when webhooks recorded it
 * and started the attempt.
 *
 * Stale since the simulated steps were removed: the deployments service no longer reads
 * BUILD_COMMAND or DEPLOY_COMMAND (it fetches the service's repository, builds and runs it), so
 * the env below does nothing and the seeded services, which have no repository, make each
 * deployment FAILED at once (two changes, BUILDING and FAILED). The figures in bench/README.md
 * were measured with the simulated steps. Measuring this again needs a service with a repository
 * (createAppRepository of @platform/shared/testing) and counting the real steps' time out.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { clientWithService } from './lib/client';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { startReceiver, type Arrival } from './lib/receiver';
import { probeOutboxSweep } from './lib/probes';
import { verdict, writeResults } from './lib/results';
import { seedDeployments } from './lib/seed';
import { main, startStack } from './lib/stack';
import { distribution } from './lib/stats';
import { connectMongo, dbName, resetStack } from './lib/stores';

const CHANGES = intEnv('BENCH_CHANGES', 500);
const IN_FLIGHT = intEnv('BENCH_IN_FLIGHT', 2);
const WARMUP_DEPLOYMENTS = intEnv('BENCH_WARMUP_DEPLOYMENTS', 3);
const RUN_LIMIT_S = intEnv('BENCH_RUN_LIMIT_S', 600);
/**
 * Deployments already in the database before measuring (default none: the benchmark as
 * specified). Deployments are never deleted but with their project or service, so a running
 * platform has many: with BENCH_HISTORY=10000 the run shows what that history costs (the relay's
 * sweep reads `{outboxPending: true}` among them), written to
 * results/event-latency-history-10000.json.
 */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 0);
const RESULTS_NAME = HISTORY > 0 ? `event-latency-history-${HISTORY}` : 'event-latency';
const FINAL = new Set(['DEPLOYED', 'FAILED', 'CANCELLED']);

interface Change {
  eventId: string;
  deploymentId: string;
  status: string;
  occurredAt: number;
  arrivedAt: number;
  latencyMs: number;
  signatureValid: boolean;
  measured: boolean;
}

main(RESULTS_NAME, 1800, async () => {
  const stack = await startStack({
    reset: resetStack,
    // BUILD_COMMAND and DEPLOY_COMMAND are no longer read (see the header).
    env: { BUILD_COMMAND: 'true', DEPLOY_COMMAND: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s' },
  });

  // Who is waiting for which deployment's final webhook.
  const finished = new Map<string, () => void>();
  const finalArrived = new Set<string>();
  const changes = new Map<string, Change>();
  let duplicates = 0;
  let measuring = false;
  const receiver = await startReceiver((arrival: Arrival) => {
    const body = arrival.body;
    if (body?.type !== 'deployment.status_changed') return;
    const eventId = String(arrival.headers['webhook-id']);
    if (changes.has(eventId)) {
      duplicates++;
      return;
    }
    const occurredAt = Date.parse(body.timestamp);
    changes.set(eventId, {
      eventId,
      deploymentId: body.data.deploymentId,
      status: body.data.status,
      occurredAt,
      arrivedAt: arrival.at,
      latencyMs: arrival.at - occurredAt,
      signatureValid: arrival.signatureValid,
      measured: measuring,
    });
    if (FINAL.has(body.data.status)) {
      finalArrived.add(body.data.deploymentId);
      finished.get(body.data.deploymentId)?.();
    }
  });

  const { client, accountId, project, service } = await clientWithService(
    stack.gateway,
    'events',
    'api',
  );
  const webhook = await client.expect(201, 'POST', `/api/projects/${project.id}/webhooks`, {
    url: receiver.url,
  });
  receiver.setSecret(webhook.secret);
  if (HISTORY > 0) {
    // Another service of the same project, so its deployments are history, not measured.
    const old = await client.expect(201, 'POST', `/api/projects/${project.id}/services`, {
      name: 'history',
    });
    const mongo = await connectMongo(stack.mongoUrl);
    await seedDeployments(
      mongo.useDb(dbName(stack.stackName, 'deployments')),
      { accountId, projectId: project.id, serviceIds: [old.id] },
      HISTORY,
    );
    await mongo.close();
    // A database that has this history, not one still writing back a bulk load (SQLite's WAL).
    say('seeded: 10 s at rest before measuring');
    await sleep(10_000);
  }
  const deploymentsPath = `/api/projects/${project.id}/services/${service.id}/deployments`;

  // Our own consumer of the topic: when each event was published (the producer's timestamp).
  const published = new Map<string, { publishedAt: number; consumedAt: number }>();
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = stack.kafkaLogin;
  const kafka = new Kafka({
    clientId: 'bench-event-latency',
    brokers: stack.kafkaBrokers.split(','),
    // The broker's admin login (infra.sh url), if it has one: its groups are of any name.
    ...(username && password ? { sasl: { mechanism: 'scram-sha-512', username, password } } : {}),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({
    groupId: `bench-latency-${randomBytes(4).toString('hex')}`,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: ['deployment.status-changed'], fromBeginning: false });
  const consumerReady = new Promise<void>((resolve) => {
    const off = consumer.on(consumer.events.FETCH, () => {
      off();
      resolve();
    });
  });
  await consumer.run({
    eachMessage: async ({ message }) => {
      try {
        const event = JSON.parse(message.value?.toString('utf8') ?? '');
        if (event.projectId !== project.id) return;
        published.set(event.eventId, {
          publishedAt: Number(message.timestamp),
          consumedAt: performance.timeOrigin + performance.now(),
        });
      } catch {
        // not ours
      }
    },
  });
  await consumerReady;

  /** Triggers one deployment and resolves when its final status has arrived as a webhook. */
  const deployOnce = async () => {
    const commitHash = randomBytes(20).toString('hex');
    const created = await client.expect(201, 'POST', deploymentsPath, { commitHash });
    await new Promise<void>((resolve) => {
      finished.set(created.id, resolve);
      // Its final webhook may have come before the trigger's answer.
      if (finalArrived.has(created.id)) resolve();
    });
  };

  say(`warm-up: ${WARMUP_DEPLOYMENTS} deployments`);
  for (let i = 0; i < WARMUP_DEPLOYMENTS; i++) await deployOnce();
  await sleep(500);

  const deployments = Math.ceil(CHANGES / 3);
  say(`measuring: ${deployments} deployments (${deployments * 3} changes), ${IN_FLIGHT} at a time`);
  measuring = true;
  const startedAt = Date.now();
  const deadline = startedAt + RUN_LIMIT_S * 1000;
  let triggered = 0;
  const worker = async () => {
    while (triggered < deployments && Date.now() < deadline) {
      triggered++;
      await deployOnce();
      if (triggered % 20 === 0) say(`${triggered}/${deployments} deployments triggered`);
    }
  };
  await Promise.race([
    Promise.all(Array.from({ length: IN_FLIGHT }, worker)),
    sleep(RUN_LIMIT_S * 1000).then(() => say('run limit reached: stopping early')),
  ]);
  const elapsedS = (Date.now() - startedAt) / 1000;
  // Let stragglers (and duplicates) land, then stop listening.
  await sleep(2_000);
  measuring = false;
  await consumer.disconnect();
  await receiver.close();

  const measured = [...changes.values()].filter((c) => c.measured);
  const latencies = measured.map((c) => c.latencyMs);
  const all = distribution(latencies);
  const byStatus = Object.fromEntries(
    ['BUILDING', 'DEPLOYING', 'DEPLOYED'].map((status) => [
      status,
      distribution(measured.filter((c) => c.status === status).map((c) => c.latencyMs)),
    ]),
  );

  // Where the time went: write → published (Kafka) → recorded (webhooks) → sent → arrived.
  const mongo = await connectMongo(stack.mongoUrl);
  const deliveries = await mongo
    .useDb(dbName(stack.stackName, 'webhooks'))
    .collection('deliveries')
    .find({ projectId: project.id }, { projection: { eventId: 1, createdAt: 1, attempts: 1 } })
    .toArray();
  // The relay's queries (its sweep, a named document, the flag's clear) on the deployments this
  // run wrote and the history.
  const relayProbe = await probeOutboxSweep(
    mongo.useDb(dbName(stack.stackName, 'deployments')).collection('deployments'),
  );
  await mongo.close();
  const deliveryOf = new Map(deliveries.map((d) => [String(d.eventId), d]));
  const stages = {
    writeToPublished: [] as number[],
    publishedToRecorded: [] as number[],
    recordedToAttempt: [] as number[],
    attemptToArrival: [] as number[],
    publishedToOurConsumer: [] as number[],
  };
  for (const change of measured) {
    const pub = published.get(change.eventId);
    const delivery = deliveryOf.get(change.eventId);
    const recordedAt = delivery?.createdAt ? new Date(delivery.createdAt).getTime() : NaN;
    const attemptAt = delivery?.attempts?.[0]?.at
      ? new Date(delivery.attempts[0].at).getTime()
      : NaN;
    if (pub) {
      stages.writeToPublished.push(pub.publishedAt - change.occurredAt);
      stages.publishedToOurConsumer.push(pub.consumedAt - pub.publishedAt);
      if (!Number.isNaN(recordedAt)) stages.publishedToRecorded.push(recordedAt - pub.publishedAt);
    }
    if (!Number.isNaN(recordedAt) && !Number.isNaN(attemptAt)) {
      stages.recordedToAttempt.push(attemptAt - recordedAt);
      stages.attemptToArrival.push(change.arrivedAt - attemptAt);
    }
  }
  const breakdown = Object.fromEntries(
    Object.entries(stages).map(([stage, values]) => [stage, distribution(values)]),
  );

  const expected = deployments * 3;
  const unsigned = measured.filter((c) => !c.signatureValid).length;
  say(
    `received ${measured.length}/${expected} changes, ${unsigned} badly signed, ${duplicates} duplicates`,
  );
  for (const [stage, d] of Object.entries(breakdown)) {
    say(`  ${stage}: p50 ${(d as { p50: number }).p50} ms, p99 ${(d as { p99: number }).p99} ms`);
  }
  const verdicts = [
    verdict('event latency p50', all.p50, '<', 50, ' ms'),
    verdict('event latency p99', all.p99, '<', 250, ' ms'),
    verdict('changes received', measured.length, '>=', expected),
    verdict('badly signed webhooks', unsigned, '<', 1),
  ];

  writeResults(RESULTS_NAME, {
    settings: {
      history: HISTORY,
      changes: expected,
      deployments,
      inFlight: IN_FLIGHT,
      warmupDeployments: WARMUP_DEPLOYMENTS,
      buildCommand: 'true',
      deployCommand: 'true',
    },
    summary: {
      received: measured.length,
      duplicates,
      badlySigned: unsigned,
      elapsedS: ms(elapsedS, 1),
      changesPerSecond: ms(measured.length / elapsedS, 1),
      latencyMs: all,
      byStatus,
    },
    breakdownMs: breakdown,
    outboxRelay: relayProbe,
    verdicts,
  });
});
