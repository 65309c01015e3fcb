import { request } from 'node:http';
import { k8s, type Kubernetes } from '@platform/kube';
import { appNamespaceOf, type DeploymentSpec, type KubernetesRunnerSettings } from './objects';

/**
 * Until a service's Service answers HTTP (any status) on its health-check path, at most
 * `deadlineMs`: a Service made by the release that just rolled out is reached only once kube-proxy
 * has synced it (moments after the rollout), and the router sends its first visitors there. True
 * once it answered; false at the deadline or when `signal` is aborted.
 */
export async function serviceAnswering(
  kc: Kubernetes.KubeConfig,
  settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
  spec: Pick<DeploymentSpec, 'projectId' | 'serviceId' | 'healthCheckPath'>,
  signal: AbortSignal,
  deadlineMs = 30_000,
): Promise<boolean> {
  const service = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedService({
    name: `app-${spec.serviceId}`,
    namespace: appNamespaceOf(settings, spec.projectId),
  });
  const host = service.spec?.clusterIP;
  const port = service.spec?.ports?.[0]?.port ?? 80;
  if (!host || host === 'None') return false;
  const until = Date.now() + deadlineMs;
  while (Date.now() < until && !signal.aborted) {
    if (await answers(host, port, spec.healthCheckPath)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Whether one GET gets an HTTP answer within a second. */
function answers(host: string, port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
