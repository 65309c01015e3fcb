import { k8s, type Kubernetes } from '@platform/kube';
import { buildJobName, buildJobObjects } from './build-job';
import { followBuildLog } from './build-log';
import { buildExitCode, collectWorkspace, WORKSPACE_BUILD } from './build-output';
import { DOCKERFILE_BUILD, dockerfileJobObjects } from './dockerfile-job';
import type { DeploymentSpec, KubernetesRunnerSettings } from './objects';
import { buildOutcome } from './outcomes';
import { KubernetesReleases } from './releases';
import { buildNamespaceObjects } from './tenancy';

/**
 * The Kubernetes runner's BUILDING step (docs/kubernetes-runner.md): the build Job (build-job.ts)
 * created in the builds' namespace, its pod's output streamed as it is printed, its
 * end read off the Job (a non-zero exit, the deadline) and the container (the exit code); cancel
 * deletes the Job and its pod.
 */

export interface BuildResult {
  state: 'succeeded' | 'failed' | 'cancelled';
  /** The Job's failure reason (BackoffLimitExceeded for an exit, DeadlineExceeded, …). */
  reason?: string;
  exitCode?: number;
  /**
   * A succeeded build's workspace, a tar layer for AppImages.push (app-images.ts); for a
   * Dockerfile, the image archive kaniko wrote (AppImages.pushArchive).
   */
  workspace?: Buffer;
  /** The kubelet's word when it evicted the build's pod (its disk limit passed). */
  evicted?: string;
  /** Why the build's log ended before the build did (its output after that is not in the log). */
  logError?: string;
}

const POLL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const notFound = (err: unknown) => (err as { code?: number } | null)?.code === 404;

export class KubernetesBuilds {
  private readonly core: Kubernetes.CoreV1Api;
  private readonly batch: Kubernetes.BatchV1Api;
  private readonly releases: KubernetesReleases;

  constructor(
    private readonly kc: Kubernetes.KubeConfig,
    private readonly settings: KubernetesRunnerSettings,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.batch = kc.makeApiClient(k8s.BatchV1Api);
    this.releases = new KubernetesReleases(kc, settings);
  }

  /**
   * Creates the builds' namespace (once), the variables' Secret and the Job (owning the Secret):
   * the build command's (build-job.ts), or kaniko's for a Dockerfile (dockerfile-job.ts).
   */
  async start(spec: DeploymentSpec, contextImage: string): Promise<void> {
    await this.releases.apply(buildNamespaceObjects(this.settings));
    const { secret, job } = (spec.dockerfilePath ? dockerfileJobObjects : buildJobObjects)(
      this.settings,
      spec,
      contextImage,
    );
    await this.releases.apply([secret]);
    const created = await this.batch.createNamespacedJob({
      namespace: this.settings.buildNamespace,
      body: job as Kubernetes.V1Job,
    });
    await this.releases.apply([
      {
        ...secret,
        metadata: {
          ...secret.metadata,
          ownerReferences: [
            {
              apiVersion: 'batch/v1',
              kind: 'Job',
              name: job.metadata.name,
              uid: created.metadata!.uid!,
            },
          ],
        },
      },
    ]);
  }

  /**
   * Streams the build's output to `onOutput` as it is printed and resolves when the Job is over:
   * succeeded, failed (with the Job's reason and the exit code), or cancelled (the Job deleted).
   */
  async follow(spec: DeploymentSpec, onOutput: (text: string) => void): Promise<BuildResult> {
    const namespace = this.settings.buildNamespace;
    const pod = await this.podOf(spec);
    if (!pod) return { state: 'cancelled' };
    const podName = pod.metadata!.name!;
    // The log can be read once the container has started (or ended).
    for (;;) {
      const current = await this.core
        .readNamespacedPod({ name: podName, namespace })
        .catch((err: unknown) => (notFound(err) ? null : Promise.reject(err)));
      if (!current) return { state: 'cancelled' };
      const state = current.status?.containerStatuses?.[0]?.state;
      if (state?.running || state?.terminated) break;
      if (current.status?.phase === 'Failed') break;
      await sleep(POLL_MS);
    }
    const logEnded = followBuildLog(this.kc, namespace, podName, onOutput);
    // Until the Job has a verdict: a command that exited 0 waits for its workspace to be copied.
    let workspace: Buffer | undefined;
    const container = spec.dockerfilePath ? DOCKERFILE_BUILD : WORKSPACE_BUILD;
    for (;;) {
      const job = await this.job(spec);
      if (!job || job.metadata?.deletionTimestamp || buildOutcome(job).state !== 'running') break;
      if (!workspace) {
        const code = await buildExitCode(this.kc, namespace, podName, container).catch(() => null);
        if (code === 0) workspace = await collectWorkspace(this.kc, namespace, podName, container);
      }
      await sleep(POLL_MS);
    }
    const logError = await logEnded;
    const result = await this.outcome(spec, podName);
    if (result.state === 'cancelled') return result;
    return {
      ...result,
      ...(logError !== undefined && { logError }),
      ...(result.state === 'succeeded' && workspace && { workspace }),
    };
  }

  /** Deletes the Job; its pod (and so the build) goes with it. */
  async cancel(spec: DeploymentSpec): Promise<void> {
    await this.batch
      .deleteNamespacedJob({
        name: buildJobName(spec),
        namespace: this.settings.buildNamespace,
        propagationPolicy: 'Foreground',
      })
      .catch((err: unknown) => (notFound(err) ? undefined : Promise.reject(err)));
  }

  /** The Job's pod once the Job controller made it; null when the Job is gone. */
  private async podOf(spec: DeploymentSpec): Promise<Kubernetes.V1Pod | null> {
    for (;;) {
      const pods = await this.core.listNamespacedPod({
        namespace: this.settings.buildNamespace,
        labelSelector: `batch.kubernetes.io/job-name=${buildJobName(spec)}`,
      });
      if (pods.items[0]) return pods.items[0];
      if (!(await this.job(spec))) return null;
      await sleep(POLL_MS);
    }
  }

  private job(spec: DeploymentSpec): Promise<Kubernetes.V1Job | null> {
    return this.batch
      .readNamespacedJob({ name: buildJobName(spec), namespace: this.settings.buildNamespace })
      .catch((err: unknown) => (notFound(err) ? null : Promise.reject(err)));
  }

  /** After the log ended: the Job's verdict (it follows the pod's end within moments). */
  private async outcome(spec: DeploymentSpec, podName: string): Promise<BuildResult> {
    for (;;) {
      const job = await this.job(spec);
      if (!job || job.metadata?.deletionTimestamp) return { state: 'cancelled' };
      const verdict = buildOutcome(job);
      if (verdict.state !== 'running') {
        const pod = await this.core
          .readNamespacedPod({ name: podName, namespace: this.settings.buildNamespace })
          .catch(() => null);
        const exitCode = pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode;
        // The kubelet evicts a pod past its ephemeral storage (BUILD_DISK_BYTES), saying so.
        const evicted = pod?.status?.reason === 'Evicted' ? (pod.status.message ?? '') : undefined;
        return {
          state: verdict.state,
          ...(verdict.reason !== undefined && { reason: verdict.reason }),
          ...(exitCode !== undefined && { exitCode }),
          ...(evicted !== undefined && { evicted }),
        };
      }
      await sleep(POLL_MS);
    }
  }
}
