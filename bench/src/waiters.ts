/**
 * Waiters: BENCH_WAITERS (default 500) clients each wait on a deployment of their own through the
 * gateway (`GET …/deployments/:id?wait=120`), all at once; then each deployment is cancelled,
 * one after the other, and the benchmark measures, for each, the time from the cancel's answer
 * (CANCELLED is written and its event is in the outbox by then) to its waiter's answer: the
 * relay publishing, Kafka, the deployments service's status watch waking the request, one read,
 * and the gateway passing the answer on.
 *
 * The pipeline is off (PIPELINE_ENABLED=false), so deployments stay BUILDING until cancelled.
 * Waiters are spread over BENCH_SERVICES services (default 10) of one account. Before the
 * cancels start, the benchmark gives the waiters BENCH_SETTLE_MS (default 3000) to be registered.
 */
import { GatewayClient } from '@platform/shared/testing';
import { clientWithService } from './lib/client';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack } from './lib/stack';
import { distribution } from './lib/stats';
import { resetStack } from './lib/stores';

const WAITERS = intEnv('BENCH_WAITERS', 500);
const SERVICES = intEnv('BENCH_SERVICES', 10);
const SETTLE_MS = intEnv('BENCH_SETTLE_MS', 3_000);

main('waiters', 900, async () => {
  const stack = await startStack({
    reset: resetStack,
    env: {
      PIPELINE_ENABLED: 'false',
      RATE_LIMIT_PER_MINUTE: '1000000',
      IP_RATE_LIMIT_PER_MINUTE: '1000000',
    },
  });
  const owner = await clientWithService(stack.gateway, 'waiters', 'svc-0');
  const client: GatewayClient = owner.client;
  const servicePaths = [`/api/projects/${owner.project.id}/services/${owner.service.id}`];
  for (let i = 1; i < SERVICES; i++) {
    const service = await client.expect(201, 'POST', `/api/projects/${owner.project.id}/services`, {
      name: `svc-${i}`,
    });
    servicePaths.push(`/api/projects/${owner.project.id}/services/${service.id}`);
  }

  say(`triggering ${WAITERS} deployments over ${SERVICES} services`);
  const deployments: string[] = [];
  for (let i = 0; i < WAITERS; i++) {
    const path = `${servicePaths[i % SERVICES]}/deployments`;
    const created = await client.expect(201, 'POST', path, {
      commitHash: (0x1000000 + i).toString(16),
    });
    deployments.push(`${path}/${created.id}`);
  }

  say(`${WAITERS} waiters, ?wait=120 each`);
  const answeredAt = new Map<string, number>();
  const statuses = new Map<string, string>();
  const waiting = deployments.map(async (path) => {
    const res = await client.get(`${path}?wait=120`);
    answeredAt.set(path, Date.now());
    statuses.set(path, res.body?.status);
  });
  await sleep(SETTLE_MS);
  const early = answeredAt.size;

  const cancelledAt = new Map<string, number>();
  for (const path of deployments) {
    await client.expect(200, 'POST', `${path}/cancel`);
    cancelledAt.set(path, Date.now());
  }
  await Promise.all(waiting);

  const latencies = deployments.map((path) => answeredAt.get(path)! - cancelledAt.get(path)!);
  const wrong = deployments.filter((path) => statuses.get(path) !== 'CANCELLED').length;
  const latency = distribution(latencies);
  say(
    `wake-up after the cancel's answer: p50 ${ms(latency.p50)} ms, p99 ${ms(latency.p99)} ms, max ${ms(latency.max)} ms`,
  );
  const verdicts = [
    verdict('waiters that answered before their deployment was final', early, '<=', 0),
    verdict('waiters whose answer was not CANCELLED', wrong, '<=', 0),
    verdict('wake-up latency p50', ms(latency.p50), '<=', 200, ' ms'),
  ];
  writeResults('waiters', {
    config: { waiters: WAITERS, services: SERVICES, settleMs: SETTLE_MS },
    wakeUpMs: latency,
    verdicts,
  });
});
