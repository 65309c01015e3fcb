import { inClientShape, k8s, type Kubernetes } from '@platform/kube';
import {
  appName,
  appNamespaceOf,
  DEPLOYMENT_ID,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';
import { rolloutOutcome } from './outcomes';
import { releaseObjects } from './release-objects';
import { rolloutFailure } from './rollout-failure';
import { projectNamespaceObjects } from './tenancy';

/**
 * The Kubernetes runner's DEPLOYING step (docs/kubernetes-runner.md): a release is the service's
 * Deployment, Service and Ingress applied server-side with the built image (by digest), and its
 * rollout watched until the Deployment controller reports it complete (DEPLOYED) or its progress
 * deadline passed (FAILED, with the pods' reasons). A failed release puts the previous one's
 * objects back, so the Deployment's template is the release that serves.
 */

export const FIELD_MANAGER = 'platform-deployments';

/** A release that ran or may run: the deployment, the image its build pushed, its place. */
export interface Release {
  spec: DeploymentSpec;
  image: string;
  /**
   * Its deployment's place in the service's order (promotion.ts `generationOf`): a release is
   * never applied over a newer one's. None: before every other.
   */
  generation?: string;
}

export interface RolloutResult {
  outcome: 'DEPLOYED' | 'FAILED';
  /** Why it failed: the progress deadline, and what the new pods were waiting on. */
  reason?: string;
}

/** The service's Deployment as it is: whose release it runs. */
export interface LiveRelease {
  deploymentId: string;
  generation: string;
  resourceVersion: string;
}

/** The annotation of the Deployment holding its release's generation. */
export const GENERATION = 'platform.dev/generation';

/** Beyond the Deployment's own progress deadline, how long a watch waits for the verdict. */
const VERDICT_MARGIN_MS = 30_000;
/**
 * Conditional applies lost to another writer in a row before giving up. Another release applied
 * meanwhile is one such writer, and so is the Deployment controller, whose status writes change
 * the resourceVersion too (a few per rollout; a CI run under load met 5 in a row): each loss is
 * read again and decided again, so the cap only ends a write that never gets in.
 */
const MAX_CONFLICTS = 50;

type DeploymentObject = Parameters<typeof rolloutOutcome>[0] & Kubernetes.V1Deployment;

const notFound = (err: unknown) => (err as { code?: number } | null)?.code === 404;
const conflict = (err: unknown) => (err as { code?: number } | null)?.code === 409;

export class KubernetesReleases {
  private readonly objects: Kubernetes.KubernetesObjectApi;
  private readonly core: Kubernetes.CoreV1Api;
  private readonly apps: Kubernetes.AppsV1Api;

  constructor(
    private readonly kc: Kubernetes.KubeConfig,
    private readonly settings: KubernetesRunnerSettings,
  ) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
  }

  /** Server-side apply, in order; the platform owns every field it sets. */
  async apply(objects: K8sObject[]): Promise<void> {
    for (const object of objects) {
      await this.objects.patch(
        inClientShape(object),
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        k8s.PatchStrategy.ServerSideApply,
      );
    }
  }

  /**
   * Releases `release` (newest wins) and watches its rollout. On FAILED, `previous` (the release
   * that served) is applied again, unless a newer release has replaced the failed one meanwhile.
   */
  async deploy(release: Release, previous: Release | null = null): Promise<RolloutResult> {
    const applied = await this.applyNewest(release);
    if (!applied.applied) {
      return { outcome: 'FAILED', reason: `a newer deployment (${applied.newer}) is live` };
    }
    const result = await this.watchRollout(release.spec);
    if (result.outcome === 'FAILED' && previous) await this.revert(release, previous);
    return result;
  }

  /** Whose release the service's Deployment runs; null when it has none. */
  async live(spec: Pick<DeploymentSpec, 'projectId' | 'serviceId'>): Promise<LiveRelease | null> {
    const deployment = await this.apps
      .readNamespacedDeployment({
        name: appName(spec),
        namespace: appNamespaceOf(this.settings, spec.projectId),
      })
      .catch((err: unknown) => (notFound(err) ? null : Promise.reject(err)));
    if (!deployment) return null;
    const annotations = deployment.metadata?.annotations ?? {};
    return {
      deploymentId: annotations[DEPLOYMENT_ID] ?? '',
      generation: annotations[GENERATION] ?? '',
      resourceVersion: deployment.metadata?.resourceVersion ?? '',
    };
  }

  /**
   * The project's namespace objects (its first release makes them), then the release's, the
   * Deployment applied only if no newer release is its (checked and written in one conditional
   * apply, on the resourceVersion read). `{ applied: false }` names the newer deployment.
   */
  async applyNewest(
    release: Release,
  ): Promise<{ applied: true } | { applied: false; newer: string }> {
    return this.applyIf(release, (live) =>
      live && live.generation > (release.generation ?? '') ? live.deploymentId : null,
    ).then((refused) => (refused ? { applied: false, newer: refused } : { applied: true }));
  }

  /**
   * Applies `previous` again after `failed`'s rollout failed, if the Deployment is still
   * `failed`'s (a newer release applied meanwhile stays). True when it was applied.
   */
  async revert(failed: Release, previous: Release): Promise<boolean> {
    const refused = await this.applyIf(previous, (live) =>
      live?.deploymentId === failed.spec.deploymentId ? null : (live?.deploymentId ?? 'none'),
    );
    return refused === null;
  }

  /**
   * Applies `release` unless `refuse(live)` names why not; the Deployment's apply carries the
   * resourceVersion `refuse` saw, so a writer in between makes it read and decide again.
   */
  private async applyIf(
    { spec, image, generation = '' }: Release,
    refuse: (live: LiveRelease | null) => string | null,
  ): Promise<string | null> {
    await this.apply(projectNamespaceObjects(this.settings, spec.projectId));
    const objects = releaseObjects(this.settings, spec, image);
    for (let losses = 0; ; losses++) {
      const live = await this.live(spec);
      const refused = refuse(live);
      if (refused !== null) return refused;
      try {
        for (const object of objects) {
          if (object.kind !== 'Deployment') await this.apply([object]);
          else await this.writeDeployment(object, generation, live);
        }
        return null;
      } catch (err) {
        if (!conflict(err) || losses + 1 >= MAX_CONFLICTS) throw err;
      }
    }
  }

  /**
   * The Deployment with its generation, written only over what `live` read: created when there
   * was none (two first releases at once: one creates it, the other is refused with 409 and reads
   * again), else applied with the resourceVersion read (a write in between: 409).
   */
  private async writeDeployment(
    object: K8sObject,
    generation: string,
    live: LiveRelease | null,
  ): Promise<void> {
    const metadata = {
      ...object.metadata,
      annotations: { ...object.metadata.annotations, [GENERATION]: generation },
    };
    if (!live) {
      await this.objects.create(
        inClientShape({ ...object, metadata }),
        undefined,
        undefined,
        FIELD_MANAGER,
      );
      return;
    }
    await this.apply([
      { ...object, metadata: { ...metadata, resourceVersion: live.resourceVersion } },
    ]);
  }

  /** The release's objects as they are, with no check (a test's set-up). */
  async applyRelease({ spec, image }: Release): Promise<void> {
    await this.apply(projectNamespaceObjects(this.settings, spec.projectId));
    await this.apply(releaseObjects(this.settings, spec, image));
  }

  /**
   * Resolves when the service's Deployment is rolled out, or failed by its progress deadline.
   * It reads only the cluster: a deployments service restarted in the middle of a rollout calls
   * it again and gets the same verdict.
   */
  watchRollout(
    spec: Pick<DeploymentSpec, 'projectId' | 'serviceId' | 'deploymentId'>,
    signal?: AbortSignal,
  ): Promise<RolloutResult> {
    const namespace = appNamespaceOf(this.settings, spec.projectId);
    const name = appName(spec);
    const deadlineMs = this.settings.app.healthCheckTimeoutSeconds * 1000 + VERDICT_MARGIN_MS;
    return new Promise<RolloutResult>((resolve, reject) => {
      let settled = false;
      let abort: AbortController | undefined;
      const finish = (result: RolloutResult | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', stopped);
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
      // Aborted: the watch ends, rejecting with an AbortError.
      const stopped = () =>
        finish(new DOMException('the rollout is no longer watched', 'AbortError'));
      if (signal?.aborted) stopped();
      signal?.addEventListener('abort', stopped, { once: true });
      const onEvent = (phase: string, object: DeploymentObject) => {
        if (phase === 'DELETED')
          finish(new Error(`the Deployment ${namespace}/${name} was deleted`));
        if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
        const runs = object.spec?.template.metadata?.annotations?.[DEPLOYMENT_ID];
        if (runs !== spec.deploymentId) {
          finish({
            outcome: 'FAILED',
            reason: `deployment ${runs ?? '(none)'} was released over it`,
          });
          return;
        }
        const outcome = rolloutOutcome(object);
        if (outcome === 'DEPLOYED') finish({ outcome });
        if (outcome === 'FAILED') {
          void rolloutFailure(this.core, namespace, object).then(
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
}
