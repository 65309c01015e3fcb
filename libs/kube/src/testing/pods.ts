import { randomBytes } from 'node:crypto';
import { waitFor } from '@platform/shared/testing';
import { k8s, type Kubernetes } from '../client';
import { kubeConfigOf, type Cluster } from '../cluster';
import { Registry } from '../registry';

/** A namespace of a test's own, deleted by `remove` (its pods and Services with it). */
export interface TestNamespace {
  name: string;
  core: Kubernetes.CoreV1Api;
  /** Creates the pod and resolves once it is Ready (or throws with its state and events). */
  runPod(pod: Kubernetes.V1Pod, timeoutMs?: number): Promise<Kubernetes.V1Pod>;
  remove(): Promise<void>;
}

/** The Pod Security level of tenants' namespaces (`restricted`), as a namespace's labels. */
export const RESTRICTED_POD_SECURITY = { 'pod-security.kubernetes.io/enforce': 'restricted' };

/**
 * A pod of one container running `node` of the cluster's Node base image with `args`, as Pod
 * Security `restricted` admits it (non-root, no privilege escalation, no capability, the
 * runtime's seccomp profile), Ready once GET `readyPath` on its port 8080 answers.
 */
export async function nodePod(
  cluster: Cluster,
  pod: { name: string; labels?: Record<string, string>; args: string[]; readyPath: string },
): Promise<Kubernetes.V1Pod> {
  return {
    metadata: { name: pod.name, labels: pod.labels },
    spec: {
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: pod.name,
          image: await new Registry(cluster.registry).pinned(cluster.nodeImage),
          args: pod.args,
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          readinessProbe: { httpGet: { path: pod.readyPath, port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

/**
 * Makes a namespace `<prefix>-<random>` (with `labels`, e.g. a Pod Security level) and waits for
 * its default ServiceAccount, which the API server needs before it admits a pod.
 */
export async function testNamespace(
  cluster: Cluster,
  prefix: string,
  labels: Record<string, string> = {},
): Promise<TestNamespace> {
  const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await waitFor(() => core.readNamespacedServiceAccount({ name: 'default', namespace: name }), {
    timeoutMs: 60_000,
    intervalMs: 200,
    what: `the default ServiceAccount of ${name}`,
  });
  return namespaceHandle(cluster, name);
}

/** A handle on the namespace `name` (made by the code under test, say): its pods, and `remove`. */
export function namespaceHandle(cluster: Cluster, name: string): TestNamespace {
  const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
  const describe = async (podName: string) => {
    const pod = await core.readNamespacedPod({ name: podName, namespace: name });
    const events = await core.listNamespacedEvent({ namespace: name });
    return JSON.stringify({
      status: pod.status,
      events: events.items.map((e) => `${e.reason}: ${e.message}`),
    });
  };
  return {
    name,
    core,
    async runPod(pod, timeoutMs = 120_000) {
      const podName = pod.metadata?.name ?? 'pod';
      await core.createNamespacedPod({ namespace: name, body: pod });
      try {
        return await waitFor(
          async () => {
            const p = await core.readNamespacedPod({ name: podName, namespace: name });
            const ready = p.status?.conditions?.some(
              (c) => c.type === 'Ready' && c.status === 'True',
            );
            return ready ? p : undefined;
          },
          { timeoutMs, intervalMs: 250, what: `pod ${name}/${podName} to be Ready` },
        );
      } catch (err) {
        throw new Error(`${String(err)}\n${await describe(podName).catch(String)}`);
      }
    },
    async remove() {
      await core.deleteNamespace({ name });
    },
  };
}
