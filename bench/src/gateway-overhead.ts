/**
 * Benchmark 1, gateway overhead: the same authenticated `GET /api/projects/:id`, through the
 * gateway (session cookie) and straight to the projects service (a signed identity header, as
 * the gateway would add), back to back in one run, at 50 connections for 20 s each.
 *
 * Rounds alternate the order (direct first, then gateway first) so drift on a shared machine
 * falls on both sides. A second pass at one connection gives the unloaded latency: at 50
 * connections every request queues behind the others (Little's law), so the p50 difference
 * there is mostly the throughput difference; at one connection it is the gateway's own time.
 *
 * `BENCH_PIN_GATEWAY=1` (→ results/gateway-overhead-pinned.json) gives the gateway a core of its
 * own, as its Kubernetes Deployment has: the gateway and this load generator on CPU 0, every
 * other process of the stack and the infrastructure on CPU 1 (taskset, all threads), for both
 * paths. Then the gateway does not take CPU from the service it fronts, and the ratio shows
 * whether its own capacity or the service's limits the throughput.
 */
import { distribution } from './lib/stats';
import { GatewayClient, identityHeaders, requestJson } from '@platform/shared/testing';
import { IDENTITY_TTL_SECONDS } from '@platform/shared';
import { uniqueEmail } from './lib/client';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { intEnv } from './lib/env';
import { cpuMeter, stackAndInfraPids, perRequest } from './lib/cpu';
import { load, type LoadResult } from './lib/load';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack } from './lib/stack';
import { resetStack } from './lib/stores';

const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const DURATION_S = intEnv('BENCH_DURATION_S', 20);
const ROUNDS = intEnv('BENCH_ROUNDS', 3);
const WARMUP_S = intEnv('BENCH_WARMUP_S', 5);
const UNLOADED_S = intEnv('BENCH_UNLOADED_S', 10);
const PIN_GATEWAY = process.env.BENCH_PIN_GATEWAY === '1';
const RESULT_NAME = PIN_GATEWAY ? 'gateway-overhead-pinned' : 'gateway-overhead';

/** Every thread of `pid` (and threads it starts later) runs only on `cpus` ("0", "1", "0,1"). */
async function pin(pid: number, cpus: string) {
  await promisify(execFile)('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)]);
}

type Path = 'gateway' | 'direct';

interface Run {
  result: LoadResult;
  samples: Float64Array;
  cpuMsPerRequest: Record<string, number>;
}

main(RESULT_NAME, 900, async () => {
  const stack = await startStack({ reset: resetStack });
  const client = new GatewayClient(stack.gateway);
  const accountId = (await client.signIn(uniqueEmail('gateway'))).body.id;
  const project = await client.expect<{ id: string }>(201, 'POST', '/api/projects', {
    name: `bench gateway ${Date.now()}`,
    description: 'The project every request of the gateway benchmark reads.',
  });
  const path = `/api/projects/${project.id}`;

  // The direct path's identity is signed afresh for each run (autocannon repeats one request):
  // an identity lives 60 s, so a run must end well within that.
  const longestS = Math.max(WARMUP_S, DURATION_S, UNLOADED_S);
  if (longestS > IDENTITY_TTL_SECONDS - 10) {
    throw new Error(`runs of ${longestS} s outlive the direct path's signed identity`);
  }
  const directUrl = `${stack.projects}${path}`;
  const identity = { accountId, audience: 'projects', secret: stack.internalSecret } as const;
  const targets: Record<Path, { url: string; headers: () => Record<string, string> }> = {
    gateway: { url: `${stack.gateway}${path}`, headers: () => ({ cookie: client.cookieHeader() }) },
    direct: { url: directUrl, headers: () => identityHeaders(identity, 'GET', directUrl) },
  };

  // Both answer the same document, or the comparison means nothing.
  const viaGateway = await client.get(path);
  const direct = await requestJson(directUrl, { identity });
  if (viaGateway.status !== 200 || direct.status !== 200) {
    throw new Error(`sanity: gateway ${viaGateway.status}, direct ${direct.status}`);
  }
  if (JSON.stringify(viaGateway.body) !== JSON.stringify(direct.body)) {
    throw new Error('sanity: the gateway and the service answered different bodies');
  }

  const pids = await stackAndInfraPids(stack);
  if (PIN_GATEWAY) {
    for (const [name, pid] of Object.entries(pids)) await pin(pid, name === 'gateway' ? '0' : '1');
    await pin(process.pid, '0');
    // Servers that outlive this run (infrastructure it did not start) get both cores back.
    process.once('exit', () => {
      for (const pid of Object.values(pids)) {
        try {
          execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '0-1', String(pid)]);
        } catch {
          // Already gone.
        }
      }
    });
    say(
      `pinned: gateway and this load generator on CPU 0, ${Object.keys(pids).length - 1} others on CPU 1`,
    );
  }
  const measure = async (which: Path, label: string, connections: number, durationS: number) => {
    const meter = cpuMeter(pids);
    const { result, samples } = await load({
      label,
      url: targets[which].url,
      headers: targets[which].headers(),
      connections,
      durationS,
    });
    const cpu = meter.stop();
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${label}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
    return { result, samples, cpuMsPerRequest: perRequest(cpu, result.requests) } as Run;
  };

  say(`warm-up: ${WARMUP_S} s per path`);
  await measure('direct', 'warm-up direct', CONNECTIONS, WARMUP_S);
  await measure('gateway', 'warm-up gateway', CONNECTIONS, WARMUP_S);

  const runs: Record<Path, Run[]> = { gateway: [], direct: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order: Path[] = round % 2 === 1 ? ['direct', 'gateway'] : ['gateway', 'direct'];
    for (const which of order) {
      runs[which].push(await measure(which, `round ${round} ${which}`, CONNECTIONS, DURATION_S));
    }
  }

  const unloaded: Record<Path, Run> = {
    direct: await measure('direct', 'unloaded direct', 1, UNLOADED_S),
    gateway: await measure('gateway', 'unloaded gateway', 1, UNLOADED_S),
  };

  const combine = (list: Run[]) => {
    const requests = list.reduce((n, r) => n + r.result.requests, 0);
    const seconds = list.reduce((n, r) => n + r.result.durationS, 0);
    const all = new Float64Array(list.reduce((n, r) => n + r.samples.length, 0));
    let at = 0;
    for (const r of list) {
      all.set(r.samples, at);
      at += r.samples.length;
    }
    return { requests, throughput: ms(requests / seconds, 1), latencyMs: distribution(all) };
  };
  const gateway = combine(runs.gateway);
  const directAll = combine(runs.direct);
  const ratio = ms(gateway.throughput / directAll.throughput, 3);
  const addedP50 = ms(gateway.latencyMs.p50 - directAll.latencyMs.p50);
  const addedP50Unloaded = ms(
    unloaded.gateway.result.latencyMs.p50 - unloaded.direct.result.latencyMs.p50,
  );

  // Each round's own ratio (its two runs were adjacent in time), and the median of them: on a
  // shared machine one slow neighbour can halve a single run.
  const roundRatios = runs.gateway.map((g, i) =>
    ms(g.result.throughput / runs.direct[i]!.result.throughput, 3),
  );
  const medianRatio = [...roundRatios].sort((a, b) => a - b)[Math.floor(roundRatios.length / 2)]!;
  // CPU per request, process by process, hardly depends on the neighbours: on a box where every
  // process shares the same cores, throughput goes as 1 / (CPU per request), so this predicts
  // the ratio from cost alone (the load generator's own CPU left out: it is the client).
  const stackCpu = (list: Run[]) => {
    const requests = list.reduce((n, r) => n + r.result.requests, 0);
    let total = 0;
    for (const r of list) {
      for (const [name, perRequest] of Object.entries(r.cpuMsPerRequest)) {
        if (name !== 'bench') total += perRequest * r.result.requests;
      }
    }
    return ms(total / requests, 3);
  };
  const cpuPerRequest = { gateway: stackCpu(runs.gateway), direct: stackCpu(runs.direct) };
  const cpuRatio = ms(cpuPerRequest.direct / cpuPerRequest.gateway, 3);
  say(`round ratios ${roundRatios.join(', ')}; CPU per request ${JSON.stringify(cpuPerRequest)}`);

  const verdicts = [
    verdict('gateway throughput / direct throughput (all rounds)', ratio, '>=', 0.6),
    verdict('same, median of the rounds', medianRatio, '>=', 0.6),
    verdict(`added p50 at ${CONNECTIONS} connections`, addedP50, '<', 2, ' ms'),
    verdict('added p50 at 1 connection (unloaded)', addedP50Unloaded, '<', 2, ' ms'),
  ];

  writeResults(RESULT_NAME, {
    request: 'GET /api/projects/:projectId',
    cpuPinning: PIN_GATEWAY
      ? {
          cpu0: ['gateway', 'load generator'],
          cpu1: Object.keys(pids).filter((n) => n !== 'gateway'),
        }
      : 'none: every process on both cores',
    settings: {
      connections: CONNECTIONS,
      durationS: DURATION_S,
      rounds: ROUNDS,
      warmupS: WARMUP_S,
    },
    summary: {
      gateway: { ...gateway },
      direct: { ...directAll },
      throughputRatio: ratio,
      roundRatios,
      medianRoundRatio: medianRatio,
      stackCpuMsPerRequest: cpuPerRequest,
      ratioPredictedFromCpu: cpuRatio,
      addedP50Ms: addedP50,
      addedP99Ms: ms(gateway.latencyMs.p99 - directAll.latencyMs.p99),
      unloaded: {
        gateway: unloaded.gateway.result.latencyMs,
        direct: unloaded.direct.result.latencyMs,
        addedP50Ms: addedP50Unloaded,
        cpuMsPerRequest: {
          gateway: unloaded.gateway.cpuMsPerRequest,
          direct: unloaded.direct.cpuMsPerRequest,
        },
      },
    },
    verdicts,
    rounds: {
      gateway: runs.gateway.map((r) => ({ ...r.result, cpuMsPerRequest: r.cpuMsPerRequest })),
      direct: runs.direct.map((r) => ({ ...r.result, cpuMsPerRequest: r.cpuMsPerRequest })),
    },
  });
});
