/**
 * What the sandbox's boundary costs (issue 21): the fixture app deployed through the gateway and
 * then asked for `/` through the gateway and the runtime's router, on a stack whose builds and
 * apps run in the sandbox (their own network namespace, veth pair and egress rules, cgroup, disk)
 * and, in the same run, on one without any sandbox (SANDBOX=none with ALLOW_UNSANDBOXED=true, the
 * development-only mode: the app a plain process on a host port). For each: trigger → URL
 * answering with the new commit over BENCH_DEPLOYS (default 15) deploys after BENCH_WARMUP (3),
 * and BENCH_REQUESTS (default 2,000) sequential GETs of the app, each timed.
 */
import { getApp } from '@platform/shared/testing';
import { answering } from './lib/app';
import { waitForServiceUrl } from './lib/client';
import { startFixtureStack } from './lib/fixture-stack';
import { intEnv } from './lib/env';
import { ms, say } from './lib/log';
import { writeResults } from './lib/results';
import { main } from './lib/stack';
import { distribution, type Distribution } from './lib/stats';

const DEPLOYS = intEnv('BENCH_DEPLOYS', 15);
const WARMUP = intEnv('BENCH_WARMUP', 3);
const REQUESTS = intEnv('BENCH_REQUESTS', 2_000);
const POLL_MS = 10;

const MODES = {
  sandbox: {},
  'no sandbox': { SANDBOX: 'none', ALLOW_UNSANDBOXED: 'true' },
} as const;

async function measure(env: Record<string, string>) {
  const { repository, servicePath, close, ...owner } = await startFixtureStack(
    'sandbox-boundary',
    env,
  );
  try {
    const deploys: number[] = [];
    let url = '';
    for (let i = 0; i < WARMUP + DEPLOYS; i++) {
      const commit = await repository.commit({ greeting: `version ${i}` });
      const started = performance.now();
      await owner.client.expect(201, 'POST', `${servicePath}/deployments`, {
        commitHash: commit.hash,
      });
      if (!url) url = await waitForServiceUrl(owner.client, servicePath, POLL_MS);
      await answering(url, commit.revision, Date.now() + 60_000);
      if (i >= WARMUP) deploys.push(performance.now() - started);
    }
    const requests: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      const answer = await getApp(url);
      if (answer.status !== 200) throw new Error(`the app answered ${answer.status}`);
      requests.push(performance.now() - started);
    }
    return { deployMs: distribution(deploys), requestMs: distribution(requests) };
  } finally {
    await close();
  }
}

main('sandbox-boundary', 1_200, async () => {
  const results: Record<string, { deployMs: Distribution; requestMs: Distribution }> = {};
  for (const [mode, env] of Object.entries(MODES)) {
    say(`${mode}: starting a stack`);
    results[mode] = await measure(env);
    const { deployMs, requestMs } = results[mode];
    say(
      `${mode}: trigger → URL p50 ${ms(deployMs.p50)} ms, p99 ${ms(deployMs.p99)} ms; ` +
        `a request through the router p50 ${ms(requestMs.p50)} ms, p99 ${ms(requestMs.p99)} ms`,
    );
  }
  const [inside, outside] = [results.sandbox!, results['no sandbox']!];
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const ratios = {
    deployP50: ratio(inside.deployMs.p50, outside.deployMs.p50),
    requestP50: ratio(inside.requestMs.p50, outside.requestMs.p50),
    requestP99: ratio(inside.requestMs.p99, outside.requestMs.p99),
  };
  say(`sandbox over no sandbox: ${JSON.stringify(ratios)}`);
  writeResults('sandbox-boundary', {
    config: { deploys: DEPLOYS, warmup: WARMUP, requests: REQUESTS },
    results,
    ratios,
    verdicts: [],
  });
});
