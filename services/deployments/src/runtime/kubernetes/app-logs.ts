import { k8s, type Kubernetes } from '@platform/kube';
import type { AppLogs, AppRelease } from '../app-logs';
import { APP_SELECTOR, DEPLOYMENT_ID, type KubernetesRunnerSettings } from './objects';
import { mergeByTime, parsePodLog, sinceTimeOf, type PodLogLine } from './pod-log';

/**
 * The apps' output on Kubernetes (AppLogs, runtime/app-logs.ts): a release is a deployment of a
 * service, run by its Deployment's pods; its id is the deployment id, the label
 * `platform.dev/deployment-id` of those pods (objects.ts). Its log is what its pods printed, read
 * through the API server with the kubelet's timestamps and merged by time; an offset is the time
 * of the last line read (pod-log.ts). A container that restarted adds what its previous run
 * printed. What the kubelet no longer keeps (a pod gone, log files rotated) is not read.
 */

/** The container an app runs in (objects.ts). */
const APP_CONTAINER = 'app';
/** A Kubernetes label value: what a release id must be to select pods by. */
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** A pod or its previous container no longer there (404), or not started yet (400). */
const nothingToRead = (err: unknown) => [400, 404].includes((err as { code?: number }).code ?? 0);

/**
 * `sinceTime`, which the generated client's readNamespacedPodLog lacks (its OpenAPI document
 * does too), added to the request by the client's own middleware.
 */
function withQueryParam(name: string, value: string) {
  const middleware: Kubernetes.ObservableMiddleware = {
    pre: (context) => {
      context.setQueryParam(name, value);
      return new k8s.Observable(Promise.resolve(context));
    },
    post: (response) => new k8s.Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' as const };
}

export class KubernetesAppLogs implements AppLogs {
  private readonly apps: Kubernetes.AppsV1Api;
  private readonly core: Kubernetes.CoreV1Api;

  constructor(
    kc: Kubernetes.KubeConfig,
    private readonly settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
  ) {
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  /**
   * Each app Deployment of the runner's namespaces: the release its template runs, `live` (a
   * rollout in progress lists the new one; a failed one's previous release is put back).
   */
  async list(): Promise<AppRelease[]> {
    const { items } = await this.apps.listDeploymentForAllNamespaces({
      labelSelector: APP_SELECTOR,
    });
    return items
      .filter((deployment) => this.isOurs(deployment))
      .flatMap((deployment) => {
        const releaseId = deployment.spec?.template.metadata?.annotations?.[DEPLOYMENT_ID];
        return releaseId ? [{ releaseId, state: 'live' as const }] : [];
      });
  }

  /**
   * The whole lines the release's pods printed after `offset` (µs since the epoch; 0: all), by
   * time, and the time of the last one as the next offset. A pod not started yet has nothing.
   */
  async readLog(releaseId: string, offset = 0): Promise<{ text: string; nextOffset: number }> {
    if (!LABEL_VALUE.test(releaseId)) throw new Error(`not a release id: ${releaseId}`);
    const { items } = await this.core.listPodForAllNamespaces({
      labelSelector: `${APP_SELECTOR},${DEPLOYMENT_ID}=${releaseId}`,
    });
    const pods = items.filter((pod) => this.isOurs(pod));
    return mergeByTime(await Promise.all(pods.map((pod) => this.linesOf(pod, offset))), offset);
  }

  private isOurs(object: { metadata?: { namespace?: string } }): boolean {
    return object.metadata?.namespace?.startsWith(`${this.settings.appNamespacePrefix}-`) ?? false;
  }

  /** A pod's lines after `offset`: its container's previous run (if any), then this one. */
  private async linesOf(pod: Kubernetes.V1Pod, offset: number): Promise<PodLogLine[]> {
    const status = pod.status?.containerStatuses?.find((c) => c.name === APP_CONTAINER);
    const runs = [
      ...(status?.lastState?.terminated ? [true] : []),
      ...(status?.state?.running || status?.state?.terminated ? [false] : []),
    ];
    const reads = runs.map((previous) => this.read(pod, previous, offset));
    return (await Promise.all(reads)).flat();
  }

  private async read(
    pod: Kubernetes.V1Pod,
    previous: boolean,
    offset: number,
  ): Promise<PodLogLine[]> {
    const sinceTime = sinceTimeOf(offset);
    const text = await this.core
      .readNamespacedPodLog(
        {
          name: pod.metadata!.name!,
          namespace: pod.metadata!.namespace!,
          container: APP_CONTAINER,
          timestamps: true,
          previous,
        },
        sinceTime ? withQueryParam('sinceTime', sinceTime) : undefined,
      )
      .catch((err: unknown) => (nothingToRead(err) ? '' : Promise.reject(err)));
    return parsePodLog(text, offset);
  }
}
