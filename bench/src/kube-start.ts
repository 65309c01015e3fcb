/**
 * The local Kubernetes cluster's start (scripts/infra kube): BENCH_RUNS (default 5) warm starts,
 * each `infra.sh stop kube` then `infra.sh start kube` (ready: the node Ready and CoreDNS
 * answering, as the script waits for it) and the first pod Running after it, with everything
 * built and cached. With BENCH_KUBE_COLD=1, one cold start first: the build cache
 * (~/.cache/platform-dev/kube) moved aside, so everything is built again from the Go module proxy
 * and Debian (many minutes), and put back after.
 *
 * It stops the cluster: never run it while tests use the cluster.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { k8s, kubeConfigOf, localClusterUrls } from '@platform/kube';
import { intEnv } from './lib/env';
import { ms, say } from './lib/log';
import { writeResults } from './lib/results';
import { main } from './lib/stack';
import { distribution } from './lib/stats';

const run = promisify(execFile);
const RUNS = intEnv('BENCH_RUNS', 5);
const INFRA = path.resolve(__dirname, '../../scripts/infra/infra.sh');
const CACHE = path.join(
  process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
  'platform-dev',
  'kube',
);

const infra = (...args: string[]) =>
  run('bash', [INFRA, ...args], { timeout: 90 * 60_000, maxBuffer: 64 * 1024 ** 2 });

/** From `start kube` to the script's ready, and to a first pod Running, in ms. */
async function startOnce(): Promise<{ ready: number; firstPod: number }> {
  await infra('stop', 'kube');
  const started = performance.now();
  await infra('start', 'kube');
  const ready = performance.now() - started;
  const cluster = await localClusterUrls();
  const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
  const name = `bench-start-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name } } });
  try {
    await core.createNamespacedPod({
      namespace: name,
      body: {
        metadata: { name: 'first' },
        spec: {
          automountServiceAccountToken: false,
          containers: [{ name: 'node', image: cluster.nodeImage, command: ['sleep', '60'] }],
        },
      },
    });
    for (;;) {
      const pod = await core.readNamespacedPod({ name: 'first', namespace: name });
      if (pod.status?.phase === 'Running') break;
      if (performance.now() - started > 10 * 60_000) throw new Error('the first pod never ran');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { ready, firstPod: performance.now() - started };
  } finally {
    await core.deleteNamespace({ name }).catch(() => undefined);
  }
}

main('kube-start', 4 * 3600, async () => {
  let cold: { ready: number; firstPod: number } | null = null;
  if (process.env.BENCH_KUBE_COLD === '1') {
    const aside = `${CACHE}.bench-aside`;
    if (existsSync(aside)) await rm(aside, { recursive: true, force: true });
    await infra('stop', 'kube');
    await rename(CACHE, aside);
    try {
      cold = await startOnce();
      say(`cold: ready in ${ms(cold.ready)} ms, first pod running at ${ms(cold.firstPod)} ms`);
    } finally {
      await infra('stop', 'kube');
      await rm(CACHE, { recursive: true, force: true });
      await rename(aside, CACHE);
    }
  }
  const ready: number[] = [];
  const firstPod: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const times = await startOnce();
    ready.push(times.ready);
    firstPod.push(times.firstPod);
    say(
      `warm ${i + 1}: ready in ${ms(times.ready)} ms, first pod running at ${ms(times.firstPod)} ms`,
    );
  }
  const warmReady = distribution(ready);
  const warmPod = distribution(firstPod);
  say(
    `warm start: ready p50 ${ms(warmReady.p50)} ms (max ${ms(warmReady.max)}), first pod p50 ${ms(warmPod.p50)} ms`,
  );
  writeResults('kube-start', {
    config: { runs: RUNS, cold: cold !== null },
    ...(cold && { coldMs: cold }),
    warmReadyMs: warmReady,
    warmFirstPodMs: warmPod,
    verdicts: [],
  });
});
