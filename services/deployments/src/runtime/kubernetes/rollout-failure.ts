import type { Kubernetes } from '@platform/kube';
import { DEPLOYMENT_ID } from './objects';

/**
 * Why a release's rollout failed, for its log: the progress deadline, and what each pod of the
 * new template is stuck on (an image pull, a crash loop with its exit code, readiness never
 * passing).
 */
export async function rolloutFailure(
  core: Kubernetes.CoreV1Api,
  namespace: string,
  deployment: Kubernetes.V1Deployment,
): Promise<string> {
  const deploymentId = deployment.spec?.template.metadata?.annotations?.[DEPLOYMENT_ID];
  const selector = Object.entries(deployment.spec?.selector.matchLabels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
  const stuck = pods.items
    .filter((pod) => pod.metadata?.annotations?.[DEPLOYMENT_ID] === deploymentId)
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
