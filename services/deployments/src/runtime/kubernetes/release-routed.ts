import { k8s, type Kubernetes } from '@platform/kube';
import {
  appNamespaceOf,
  DEPLOYMENT_ID,
  type DeploymentSpec,
  type KubernetesRunnerSettings,
} from './objects';

/**
 * Until the service's URL sends visitors to the release just rolled out and to nothing else: its
 * Service's EndpointSlices list exactly the release's ready pods (a replaced pod leaves them at
 * its deletion, moments after the rollout completes), and `routedHosts` (this process's router,
 * KubernetesRoutes, if it runs one) has seen the same. At most `deadlineMs`; true once it holds,
 * false at the deadline or when `signal` is aborted.
 */
export async function releaseRouted(
  kc: Kubernetes.KubeConfig,
  settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
  spec: Pick<DeploymentSpec, 'projectId' | 'serviceId' | 'deploymentId' | 'replicas'>,
  signal: AbortSignal,
  routedHosts: (serviceId: string) => string[] | undefined = () => undefined,
  deadlineMs = 30_000,
): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const namespace = appNamespaceOf(settings, spec.projectId);
  const until = Date.now() + deadlineMs;
  while (Date.now() < until && !signal.aborted) {
    const [pods, slices] = await Promise.all([
      core.listNamespacedPod({ namespace, labelSelector: `${DEPLOYMENT_ID}=${spec.deploymentId}` }),
      discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=app-${spec.serviceId}`,
      }),
    ]);
    const releasePods = new Set(pods.items.map((pod) => pod.status?.podIP).filter(Boolean));
    const ready = slices.items.flatMap((slice) =>
      (slice.endpoints ?? [])
        .filter((endpoint) => endpoint.conditions?.ready === true)
        .map((endpoint) => endpoint.addresses[0]!),
    );
    const routed = routedHosts(spec.serviceId);
    if (
      ready.length === (spec.replicas ?? 1) &&
      ready.every((ip) => releasePods.has(ip)) &&
      (routed === undefined || sameSet(routed, ready))
    ) {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

const sameSet = (a: string[], b: string[]) =>
  a.length === b.length && a.every((item) => b.includes(item));
