import { randomBytes } from 'node:crypto';
import { findOrStartCluster, k8s, kubeConfigOf, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { appNamespaceOf } from '../runtime/kubernetes/objects';
import { useHarness, type WorkerSettings } from './harness';
import type { OwnedService } from './projects-stub';

/**
 * The real pipeline with RUNTIME=kubernetes on the local cluster (docs/kubernetes-runner.md), for
 * a test file: namespaces of its own (`<prefix>-<projectId>` for apps, `<prefix>-builds` for
 * builds, a random prefix), deleted after its tests; `settings` over the ones every such test
 * needs (the limits and deadlines of a loaded machine).
 */
export function useKubernetesHarness(settings: WorkerSettings = {}) {
  const prefix = `pk-${randomBytes(3).toString('hex')}`;
  const buildNamespace = `${prefix}-builds`;
  let cluster: Cluster | undefined;
  const h = useHarness(async () => {
    cluster = await findOrStartCluster();
    return {
      pipeline: {
        RUNTIME: 'kubernetes',
        KUBECONFIG: cluster.kubeconfigPath,
        KUBE_REGISTRY: cluster.registry,
        KUBE_NODE_IMAGE: cluster.nodeImage,
        KUBE_DNS_CIDRS: cluster.dnsCidrs,
        KUBE_APP_NAMESPACE_PREFIX: prefix,
        KUBE_BUILD_NAMESPACE: buildNamespace,
        // A pod's readiness takes seconds on a loaded machine: the rollout's progress deadline.
        HEALTH_CHECK_TIMEOUT: '90s',
        RUNTIME_APP_CPUS: '0.2',
        RUNTIME_APP_MEMORY_BYTES: String(128 * 1024 ** 2),
        BUILD_CPUS: '0.5',
        BUILD_MEMORY_BYTES: String(256 * 1024 ** 2),
        PIPELINE_LEASE: '10s',
        PIPELINE_HEARTBEAT: '200ms',
        ...settings,
      },
    };
  });

  const clusterOf = (): Cluster => {
    if (!cluster) throw new Error('the cluster is known once the harness has started');
    return cluster;
  };
  const core = () => kubeConfigOf(clusterOf()).makeApiClient(k8s.CoreV1Api);

  afterAll(async () => {
    if (!cluster) return;
    const namespaces = await core().listNamespace();
    for (const ns of namespaces.items) {
      const name = ns.metadata!.name!;
      if (name.startsWith(`${prefix}-`))
        await core()
          .deleteNamespace({ name })
          .catch(() => null);
    }
  });

  /** The namespace of a service's app (its project's). */
  const appNamespace = (service: OwnedService) =>
    appNamespaceOf({ appNamespacePrefix: prefix }, service.projectId);

  /** The pods of a deployment's release. */
  const podsOf = async (service: OwnedService, deploymentId: string) => {
    const pods = await core().listNamespacedPod({
      namespace: appNamespace(service),
      labelSelector: `platform.dev/service-id=${service.serviceId}`,
    });
    return pods.items.filter(
      (p) => p.metadata?.annotations?.['platform.dev/deployment-id'] === deploymentId,
    );
  };

  return {
    h,
    prefix,
    buildNamespace,
    cluster: clusterOf,
    core,
    appNamespace,
    podsOf,
    /**
     * What a deployment's app printed (its pod's log, read through the API server) once it
     * contains `text`.
     */
    appLogOnce(service: OwnedService, deploymentId: string, text: string, timeoutMs: number) {
      return waitFor(
        async () => {
          for (const pod of await podsOf(service, deploymentId)) {
            const log = await core()
              .readNamespacedPodLog({ name: pod.metadata!.name!, namespace: appNamespace(service) })
              .catch(() => '');
            if (log.includes(text)) return log;
          }
          return null;
        },
        { timeoutMs, what: `"${text}" in the app's log of ${deploymentId}` },
      );
    },
    /** The pod of a deployment's build Job (kept with its Job after the build). */
    async buildPodOf(deploymentId: string) {
      const pods = await core().listNamespacedPod({
        namespace: buildNamespace,
        labelSelector: `platform.dev/deployment-id=${deploymentId}`,
      });
      return pods.items[0] ?? null;
    },
    /** Where a service's app answers inside the cluster: its Service's ClusterIP, port 80. */
    async serviceAddressOf(service: OwnedService) {
      const found = await core().readNamespacedService({
        name: `app-${service.serviceId}`,
        namespace: appNamespace(service),
      });
      return `${found.spec!.clusterIP!}:80`;
    },
  };
}

export type KubernetesHarness = ReturnType<typeof useKubernetesHarness>;
