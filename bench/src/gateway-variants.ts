/**
 * Benchmark 1's follow-up: what two of the proposed gateway changes buy, measured without
 * editing the service. The gateway's own app runs in a process of ours (variant-gateway.ts) on
 * port 28082 in four variants: as built, with ioredis auto-pipelining, with per-request success
 * logs off (logger at warn), and both; each is loaded like benchmark 1 (50 connections, 20 s),
 * twice (in order, then in reverse order), with direct runs to the projects service at the start,
 * the middle and the end as the reference throughput. CPU per request is measured per process,
 * the figure least disturbed by the neighbours.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BrowserClient, identityHeader, uniqueEmail } from './lib/client';
import { cpuMeter, infraPids, perRequest } from './lib/cpu';
import { intEnv } from './lib/env';
import { load, type LoadResult } from './lib/load';
import { ms, say, waitFor } from './lib/log';
import { writeResults } from './lib/results';
import { gatewayProcessEnv, main, startStack } from './lib/stack';
import { resetStack } from './lib/stores';

const PORT = 28082;
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const DURATION_S = intEnv('BENCH_DURATION_S', 20);

const VARIANTS: Record<string, Record<string, string>> = {
  'as built': {},
  'auto-pipelining': { BENCH_VARIANT_AUTOPIPELINING: 'true' },
  'no success logs': { BENCH_VARIANT_LOG_LEVEL: 'warn' },
  both: { BENCH_VARIANT_AUTOPIPELINING: 'true', BENCH_VARIANT_LOG_LEVEL: 'warn' },
};

main('gateway-variants', 1200, async () => {
  const stack = await startStack({ reset: resetStack });
  const client = new BrowserClient(stack.gateway);
  const accountId = await client.signIn(uniqueEmail('variants'));
  const project = await client.expect(201, 'POST', '/api/projects', { name: 'variants' });
  const projectPath = `/api/projects/${project.id}`;
  const identity = identityHeader(accountId, stack.internalSecret, 3600);
  const infra = await infraPids();

  const measure = async (
    label: string,
    url: string,
    headers: Record<string, string>,
    pids: Record<string, number>,
  ) => {
    const meter = cpuMeter(pids);
    const { result } = await load({
      label,
      url,
      headers,
      connections: CONNECTIONS,
      durationS: DURATION_S,
    });
    if (result.non2xx + result.errors > 0) throw new Error(`${label}: failures`);
    return { result, cpuMsPerRequest: perRequest(meter.stop(), result.requests) };
  };
  const direct = () =>
    measure('direct', `${stack.projects}${projectPath}`, identity, {
      projects: stack.pids.projects!,
      ...infra,
    });

  const directRuns: { result: LoadResult; cpuMsPerRequest: Record<string, number> }[] = [];
  await measure('warm-up direct', `${stack.projects}${projectPath}`, identity, {});
  directRuns.push(await direct());
  const runs: Record<string, { result: LoadResult; cpuMsPerRequest: Record<string, number> }[]> =
    Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
  const order = Object.keys(VARIANTS);
  for (const pass of [order, [...order].reverse()]) {
    for (const name of pass) {
      const child = spawn(process.execPath, [path.join(__dirname, 'variant-gateway.js')], {
        env: { ...gatewayProcessEnv(stack, PORT), ...VARIANTS[name] },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await waitFor(
          async () => (await fetch(`http://127.0.0.1:${PORT}/readyz`).catch(() => null))?.ok,
          { timeoutMs: 30_000, what: `the ${name} gateway` },
        );
        const url = `http://127.0.0.1:${PORT}${projectPath}`;
        const headers = { cookie: client.cookieHeader() };
        await load({
          label: `warm-up ${name}`,
          url,
          headers,
          connections: CONNECTIONS,
          durationS: 3,
        });
        runs[name]!.push(
          await measure(name, url, headers, {
            gateway: child.pid!,
            projects: stack.pids.projects!,
            ...infra,
          }),
        );
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }
    directRuns.push(await direct());
  }

  const directThroughput =
    directRuns.reduce((n, r) => n + r.result.throughput, 0) / directRuns.length;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const summary = Object.fromEntries(
    Object.entries(runs).map(([name, list]) => {
      const throughput = mean(list.map((r) => r.result.throughput));
      return [
        name,
        {
          throughput: ms(throughput, 1),
          ratioToDirect: ms(throughput / directThroughput, 3),
          p50: ms(mean(list.map((r) => r.result.latencyMs.p50))),
          p99: ms(mean(list.map((r) => r.result.latencyMs.p99))),
          gatewayCpuMsPerRequest: ms(mean(list.map((r) => r.cpuMsPerRequest.gateway ?? NaN)), 3),
          redisCpuMsPerRequest: ms(mean(list.map((r) => r.cpuMsPerRequest.redis ?? NaN)), 3),
        },
      ];
    }),
  );
  for (const [name, s] of Object.entries(summary)) say(`${name}: ${JSON.stringify(s)}`);
  writeResults('gateway-variants', {
    request: 'GET /api/projects/:projectId',
    settings: { connections: CONNECTIONS, durationS: DURATION_S },
    directThroughput: ms(directThroughput, 1),
    summary,
    direct: directRuns,
    runs,
  });
});
