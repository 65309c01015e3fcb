/**
 * Deploy latency on Kubernetes: trigger → the service's URL (through the gateway) answering with
 * the new commit, for the fixture app, with RUNTIME=kubernetes on the local cluster, beside the
 * local runtime and beside the same steps done by hand on the cluster, in one run. BENCH_DEPLOYS
 * (default 10) measured deployments after BENCH_WARMUP (default 2) of each.
 *
 * By hand are the runner's own steps called directly, with no API, database, events or pipeline:
 * a shallow `git fetch` of the commit, the checkout pushed as the build's context image, the build
 * Job run and followed to its end, the app's image pushed, the release applied and its rollout
 * watched, then `GET /` at its Service until it answers with the commit. The ratio is what the
 * platform adds to the work on the cluster; the local runtime's column is the same trigger → URL
 * with apps in sandboxes on this machine.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findOrStartCluster, k8s, kubeConfigOf, Registry, type Cluster } from '@platform/kube';
import { createAppRepository, FIXTURE_APP, type AppRepository } from '@platform/shared/testing';
import { AppImages } from '@platform/deployments/dist/runtime/kubernetes/app-images';
import { pushBuildContext } from '@platform/deployments/dist/runtime/kubernetes/build-job';
import { KubernetesBuilds } from '@platform/deployments/dist/runtime/kubernetes/builds';
import type { DeploymentSpec } from '@platform/deployments/dist/runtime/kubernetes/objects';
import { appNamespaceOf } from '@platform/deployments/dist/runtime/kubernetes/objects';
import { KubernetesReleases } from '@platform/deployments/dist/runtime/kubernetes/releases';
import {
  kubernetesRunnerEnv,
  runnerSettingsOf,
} from '@platform/deployments/dist/runtime/kubernetes/runner.env';
import { answering, getDirect } from './lib/app';
import { intEnv } from './lib/env';
import { startFixtureStack } from './lib/fixture-stack';
import { timedDeploy } from './lib/timed-deploy';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main } from './lib/stack';
import { distribution } from './lib/stats';

const run = promisify(execFile);
const DEPLOYS = intEnv('BENCH_DEPLOYS', 10);
const WARMUP = intEnv('BENCH_WARMUP', 2);
const POLL_MS = 10;
/** A rollout on a loaded 2-core machine: generous. */
const ANSWER_DEADLINE_MS = 180_000;

/** N deploys through the platform of a stack started with `env`: trigger → URL answering, ms. */
async function throughPlatform(label: string, env: Record<string, string>): Promise<number[]> {
  const { repository, servicePath, close, ...owner } = await startFixtureStack(label, env);
  try {
    const times: number[] = [];
    for (let i = 0; i < WARMUP + DEPLOYS; i++) {
      const commit = await repository.commit({ greeting: `version ${i}` });
      const { elapsed } = await timedDeploy(owner.client, servicePath, commit, {
        pollMs: POLL_MS,
        deadlineMs: ANSWER_DEADLINE_MS,
      });
      if (i >= WARMUP) times.push(elapsed);
      say(`${label} ${i + 1}${i < WARMUP ? ' (warm-up)' : ''}: ${ms(elapsed)} ms`);
    }
    return times;
  } finally {
    await close();
  }
}

/** The runner's steps by hand on the cluster, N times: fetch → URL answering, ms. */
async function byHand(cluster: Cluster, repository: AppRepository): Promise<number[]> {
  const env = kubernetesRunnerEnv.parse({
    KUBE_REGISTRY: cluster.registry,
    KUBE_NODE_IMAGE: cluster.nodeImage,
    KUBE_DNS_CIDRS: cluster.dnsCidrs,
    KUBE_APP_NAMESPACE_PREFIX: 'bench-hand',
    KUBE_BUILD_NAMESPACE: 'bench-hand-builds',
  });
  // The deployments service's defaults (config.ts), so both run the same pods.
  const settings = runnerSettingsOf({
    ...env,
    HEALTH_CHECK_TIMEOUT: 180_000,
    BUILD_CPUS: 1,
    BUILD_MEMORY_BYTES: 2 * 1024 ** 3,
    RUNTIME_APP_CPUS: 1,
    RUNTIME_APP_MEMORY_BYTES: 512 * 1024 ** 2,
    RUNTIME_APP_TMP_BYTES: 64 * 1024 ** 2,
    BUILD_DISK_BYTES: 4 * 1024 ** 3,
  });
  const kc = kubeConfigOf(cluster);
  const registry = new Registry(cluster.registry);
  const builds = new KubernetesBuilds(kc, settings);
  const releases = new KubernetesReleases(kc, settings);
  const images = new AppImages(registry, settings);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const projectId = `p${Date.now().toString(16)}`;
  const serviceId = `s${Date.now().toString(16)}`;
  const times: number[] = [];
  try {
    for (let i = 0; i < WARMUP + DEPLOYS; i++) {
      const commit = await repository.commit({ greeting: `by hand ${i}` });
      const spec: DeploymentSpec = {
        deploymentId: `${Date.now().toString(16).padStart(16, '0')}${i.toString(16).padStart(8, '0')}`,
        serviceId,
        projectId,
        accountId: 'bench',
        commitHash: commit.hash,
        repository: repository.url,
        branch: repository.branch,
        rootDirectory: '',
        buildCommand: FIXTURE_APP.buildCommand,
        startCommand: FIXTURE_APP.startCommand,
        healthCheckPath: FIXTURE_APP.healthCheckPath,
        variables: {},
      };
      const dir = await mkdtemp(path.join(tmpdir(), 'bench-kube-hand-'));
      const started = performance.now();
      try {
        const git = (...args: string[]) => run('git', ['-C', dir, ...args]);
        await git('init', '--quiet');
        await git('fetch', '--quiet', '--depth=1', repository.url, commit.hash);
        await git('checkout', '--quiet', '--detach', 'FETCH_HEAD');
        await builds.start(spec, await pushBuildContext(registry, settings, spec, dir));
        const built = await builds.follow(spec, () => undefined);
        if (built.state !== 'succeeded' || !built.workspace) {
          throw new Error(`the build by hand ${built.state}: ${built.reason ?? ''}`);
        }
        const image = await images.push(spec, built.workspace);
        const result = await releases.deploy({ spec, image, generation: spec.deploymentId });
        if (result.outcome !== 'DEPLOYED') throw new Error(`by hand: ${result.reason ?? ''}`);
        const service = await core.readNamespacedService({
          name: `app-${serviceId}`,
          namespace: appNamespaceOf(settings, projectId),
        });
        await answering(
          `http://${service.spec?.clusterIP}/`,
          commit.revision,
          Date.now() + ANSWER_DEADLINE_MS,
          getDirect,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const elapsed = performance.now() - started;
      if (i >= WARMUP) times.push(elapsed);
      say(`by hand on Kubernetes ${i + 1}${i < WARMUP ? ' (warm-up)' : ''}: ${ms(elapsed)} ms`);
    }
    return times;
  } finally {
    await images.removeService(serviceId).catch(() => undefined);
    for (const name of [settings.buildNamespace, appNamespaceOf(settings, projectId)]) {
      await core.deleteNamespace({ name }).catch(() => undefined);
    }
  }
}

/** The namespaces the platform made (its apps, its builds): they outlive its stack. */
async function deleteNamespaces(cluster: Cluster, prefix: string): Promise<void> {
  const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
  for (const ns of (await core.listNamespace()).items) {
    const name = ns.metadata!.name!;
    if (name.startsWith(prefix)) await core.deleteNamespace({ name });
  }
}

main('deploy-latency-kubernetes', 3600, async () => {
  const cluster = await findOrStartCluster();
  const local = distribution(await throughPlatform('local-runtime', {}));
  const kube = distribution(
    await throughPlatform('kubernetes', {
      RUNTIME: 'kubernetes',
      KUBECONFIG: cluster.kubeconfigPath,
      KUBE_REGISTRY: cluster.registry,
      KUBE_NODE_IMAGE: cluster.nodeImage,
      KUBE_DNS_CIDRS: cluster.dnsCidrs,
      KUBE_APP_NAMESPACE_PREFIX: 'bench-apps',
      KUBE_BUILD_NAMESPACE: 'bench-builds',
      HEALTH_CHECK_TIMEOUT: '180s',
    }).finally(() => deleteNamespaces(cluster, 'bench-')),
  );
  const repository = await createAppRepository();
  let hand;
  try {
    hand = distribution(await byHand(cluster, repository));
  } finally {
    await repository.close();
  }
  const ratio = Math.round((kube.p50 / hand.p50) * 100) / 100;
  const overLocal = Math.round((kube.p50 / local.p50) * 100) / 100;
  say(
    `trigger → URL answering, p50 (p95): Kubernetes ${ms(kube.p50)} (${ms(kube.p95)}) ms, local runtime ${ms(local.p50)} (${ms(local.p95)}) ms, by hand on Kubernetes ${ms(hand.p50)} (${ms(hand.p95)}) ms; Kubernetes ÷ by hand ${ratio}, Kubernetes ÷ local ${overLocal}`,
  );
  writeResults('deploy-latency-kubernetes', {
    config: { deploys: DEPLOYS, warmup: WARMUP, pollMs: POLL_MS },
    kubernetesMs: kube,
    localMs: local,
    byHandOnKubernetesMs: hand,
    p50RatioOverByHand: ratio,
    p50RatioOverLocal: overLocal,
    verdicts: [verdict('Kubernetes p50 over by-hand p50', ratio, '<=', 2)],
  });
});
