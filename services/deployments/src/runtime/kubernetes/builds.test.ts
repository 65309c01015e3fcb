import { rmSync } from 'node:fs';
import { findOrStartCluster, k8s, kubeConfigOf, Registry, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { buildJobName, pushBuildContext } from './build-job';
import { KubernetesBuilds, type BuildResult } from './builds';
import type { KubernetesRunnerSettings } from './objects';
import {
  deleteBuildNamespace,
  fixtureCheckout,
  testDeployment,
  testRunnerSettings,
} from './testing';

/**
 * BUILDING on a real cluster (scripts/infra kube, or the one KUBECONFIG names): the checkout goes
 * into the registry as the build context, a Job runs the build command in it, its output arrives
 * as it is printed, a failing command and the deadline fail the build, cancel deletes the Job.
 */

describe('Kubernetes builds (context image, Job, streamed output, cancel)', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let checkout: string;

  const specOf = (buildCommand: string) =>
    testDeployment({ buildCommand, variables: { GREETING: 'hello there' } });

  /** Runs a build to its end; every line with the time it arrived. */
  const build = async (command: string, overrides: Partial<KubernetesRunnerSettings> = {}) => {
    const these = { ...settings, ...overrides };
    const builds = new KubernetesBuilds(kubeConfigOf(cluster), these);
    const spec = specOf(command);
    const context = await pushBuildContext(new Registry(cluster.registry), these, spec, checkout);
    await builds.start(spec, context);
    const lines: { line: string; at: number }[] = [];
    const result = await builds.follow(spec, (text) => {
      for (const line of text.split('\n').slice(0, -1)) lines.push({ line, at: Date.now() });
    });
    return { spec, builds, lines, result };
  };

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster, { app: { healthCheckTimeoutSeconds: 15 } });
    checkout = fixtureCheckout(
      `require('node:fs').writeFileSync('out.txt', 'built ' + process.env.PLATFORM_DEPLOYMENT_ID + ' as ' + process.getuid());`,
    );
  }, 50 * 60_000);

  afterAll(async () => {
    rmSync(checkout, { recursive: true, force: true });
    await deleteBuildNamespace(cluster, settings);
  });

  test('runs the build command in the checkout with the variables; output arrives as printed', async () => {
    const { spec, lines, result } = await build(
      'echo "first $GREETING"; sleep 3; npm run build --silent && cat out.txt && echo',
    );
    const { workspace, ...verdict } = result;
    expect(verdict).toEqual<BuildResult>({ state: 'succeeded', exitCode: 0 });
    expect(workspace?.length).toBeGreaterThan(0); // what the build made, for the app's image
    const text = lines.map((l) => l.line);
    expect(text).toEqual(['first hello there', `built ${spec.deploymentId} as 1000`]);
    // The first line was here while the build still slept: streamed, not collected at the end.
    expect(lines[1]!.at - lines[0]!.at).toBeGreaterThanOrEqual(2_000);
  }, 600_000);

  test('a failing build command fails the build with its exit code', async () => {
    const { lines, result } = await build('echo oops >&2; exit 3');
    expect(result).toEqual<BuildResult>({
      state: 'failed',
      reason: 'BackoffLimitExceeded',
      exitCode: 3,
    });
    expect(lines.map((l) => l.line)).toEqual(['oops']);
  }, 600_000);

  test('the deadline ends a build that runs too long', async () => {
    const { result } = await build('echo slow; sleep 120', {
      build: { ...settings.build, timeoutSeconds: 5 },
    });
    expect(result.state).toBe('failed');
    expect(result.reason).toBe('DeadlineExceeded');
  }, 600_000);

  test('cancel deletes the Job and its pod; follow says cancelled', async () => {
    const builds = new KubernetesBuilds(kubeConfigOf(cluster), settings);
    const spec = specOf('echo started; sleep 600');
    const context = await pushBuildContext(
      new Registry(cluster.registry),
      settings,
      spec,
      checkout,
    );
    await builds.start(spec, context);
    let started!: () => void;
    const sawStart = new Promise<void>((resolve) => (started = resolve));
    const following = builds.follow(spec, (text) => text.includes('started\n') && started());
    await sawStart;
    await builds.cancel(spec);
    expect(await following).toEqual<BuildResult>({ state: 'cancelled' });
    const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
    const batch = kubeConfigOf(cluster).makeApiClient(k8s.BatchV1Api);
    await waitFor(
      async () => {
        const pods = await core.listNamespacedPod({
          namespace: settings.buildNamespace,
          labelSelector: `batch.kubernetes.io/job-name=${buildJobName(spec)}`,
        });
        const job = await batch
          .readNamespacedJob({ name: buildJobName(spec), namespace: settings.buildNamespace })
          .then(
            () => 'present',
            (err: { code?: number }) => (err.code === 404 ? 'gone' : 'error'),
          );
        return pods.items.length === 0 && job === 'gone';
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the Job and its pod to be gone' },
    );
  }, 600_000);
});
