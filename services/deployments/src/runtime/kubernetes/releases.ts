import { k8s, type Kubernetes } from '@platform/kube';
import {
  appNamespaceOf,
  releaseObjects,
  rolloutOutcome,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';
import { projectNamespaceObjects } from './tenancy';

/**
 * The Kubernetes runner's DEPLOYING step (docs/kubernetes-runner.md): a release is the service's
 * Deployment, Service and Ingress applied server-side with the built image (by digest), and its
 * rollout watched until the Deployment controller reports it complete (DEPLOYED) or its progress
 * deadline passed (FAILED, with the pods' reasons). A failed release puts the previous one's
 * objects back, so the Deployment's template is the release that serves.
 */

export const FIELD_MANAGER = 'platform-deployments';

/** A release that ran or may run: the deployment and the image its build pushed. */
export interface Release {
  spec: DeploymentSpec;
  image: string;
}

export interface RolloutResult {
  outcome: 'DEPLOYED' | 'FAILED';
  /** Why it failed: the progress deadline, and what the new pods were waiting on. */
  reason?: string;
}

/** Beyond the Deployment's own progress deadline, how long a watch waits for the verdict. */
const VERDICT_MARGIN_MS = 30_000;

type DeploymentObject = Parameters<typeof rolloutOutcome>[0] & Kubernetes.V1Deployment;

export class KubernetesReleases {
  private readonly objects: Kubernetes.KubernetesObjectApi;
  private readonly core: Kubernetes.CoreV1Api;

  constructor(
    private readonly kc: Kubernetes.KubeConfig,
    private readonly settings: KubernetesRunnerSettings,
  ) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  /** Server-side apply, in order; the platform owns every field it sets. */
  async apply(objects: K8sObject[]): Promise<void> {
    for (const object of objects) {
      await this.objects.patch(
        object,
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        k8s.PatchStrategy.ServerSideApply,
      );
    }
  }

  /**
   * Applies the project's namespace (its first release makes it) and the release, then watches
   * the rollout. On FAILED, `previous` (the release that served) is applied again.
   */
  async deploy(release: Release, previous: Release | null = null): Promise<RolloutResult> {
    await this.applyRelease(release);
    const result = await this.watchRollout(release.spec);
    if (result.outcome === 'FAILED' && previous) {
      await this.apply(releaseObjects(this.settings, previous.spec, previous.image));
    }
    return result;
  }

  /** The project's namespace objects (its first release makes them), then the release's. */
  async applyRelease({ spec, image }: Release): Promise<void> {
    await this.apply(projectNamespaceObjects(this.settings, spec.projectId));
    await this.apply(releaseObjects(this.settings, spec, image));
  }

  /**
   * Resolves when the service's Deployment is rolled out, or failed by its progress deadline.
   * It reads only the cluster: a deployments service restarted in the middle of a rollout calls
   * it again and gets the same verdict.
   */
  watchRollout(spec: Pick<DeploymentSpec, 'projectId' | 'serviceId'>): Promise<RolloutResult> {
    const namespace = appNamespaceOf(this.settings, spec.projectId);
    const name = `app-${spec.serviceId}`;
    const deadlineMs = this.settings.app.healthCheckTimeoutSeconds * 1000 + VERDICT_MARGIN_MS;
    return new Promise<RolloutResult>((resolve, reject) => {
      let settled = false;
      let abort: AbortController | undefined;
      const finish = (result: RolloutResult | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        abort?.abort();
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const timer = setTimeout(
        () =>
          finish({
            outcome: 'FAILED',
            reason: `the rollout had no verdict within ${deadlineMs / 1000} s`,
          }),
        deadlineMs,
      );
      const onEvent = (phase: string, object: DeploymentObject) => {
        if (phase === 'DELETED')
          finish(new Error(`the Deployment ${namespace}/${name} was deleted`));
        if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
        const outcome = rolloutOutcome(object);
        if (outcome === 'DEPLOYED') finish({ outcome });
        if (outcome === 'FAILED') {
          void this.failureReason(namespace, object).then(
            (reason) => finish({ outcome, reason }),
            (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
          );
        }
      };
      // A watch without a resourceVersion begins with the object as it is (ADDED); the server
      // ends a watch after a while, so it is made again until there is a verdict.
      const watch = () => {
        if (settled) return;
        new k8s.Watch(this.kc)
          .watch(
            `/apis/apps/v1/namespaces/${namespace}/deployments`,
            { fieldSelector: `metadata.name=${name}` },
            onEvent,
            (err: unknown) => {
              if (settled) return;
              if (err && !(err instanceof Error && err.name === 'AbortError')) {
                finish(err instanceof Error ? err : new Error(String(err)));
              } else watch();
            },
          )
          .then(
            (controller) => {
              abort = controller;
              if (settled) controller.abort();
            },
            (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
          );
      };
      watch();
    });
  }

  /** The progress deadline, and what each pod of the new template is stuck on. */
  private async failureReason(namespace: string, deployment: DeploymentObject): Promise<string> {
    const deploymentId =
      deployment.spec?.template.metadata?.annotations?.['platform.dev/deployment-id'];
    const selector = Object.entries(deployment.spec?.selector.matchLabels ?? {})
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const pods = await this.core.listNamespacedPod({ namespace, labelSelector: selector });
    const stuck = pods.items
      .filter((pod) => pod.metadata?.annotations?.['platform.dev/deployment-id'] === deploymentId)
      .flatMap((pod) =>
        (pod.status?.containerStatuses ?? []).map((c) => {
          const waiting = c.state?.waiting;
          if (waiting) return `${waiting.reason ?? 'waiting'}: ${waiting.message ?? ''}`.trim();
          if (c.lastState?.terminated) {
            return `exited with ${c.lastState.terminated.exitCode} (${c.restartCount} restarts)`;
          }
          return c.ready ? 'ready' : 'running, readiness never passed';
        }),
      );
    const seconds = deployment.spec?.progressDeadlineSeconds ?? 0;
    return `progress deadline exceeded (${seconds} s)${stuck.length ? `: ${[...new Set(stuck)].join('; ')}` : ''}`;
  }
}
