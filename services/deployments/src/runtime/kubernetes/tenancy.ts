import { APP_PORT, appNamespaceOf, type K8sObject, type KubernetesRunnerSettings } from './objects';
import { NON_PUBLIC_IPV4_RANGES } from '../../sandbox/network/non-public-ranges';

/**
 * What stands between a tenant and the platform with the Kubernetes runner (docs/tenant-isolation.md):
 * each project's apps in a namespace of their own, under the `restricted` Pod Security Standard,
 * whose NetworkPolicies deny everything but traffic from the ingress controller in and to public
 * addresses and the cluster DNS (its kube-dns pods, or port 53 at `clusterDnsCidrs`) out (never
 * the platform's namespace, the cluster's ranges or any private, link-local, shared or metadata
 * address), with a ResourceQuota for the project and a LimitRange for each container. Builds run
 * in the platform's build namespace (`baseline`: kaniko's capabilities, dockerfile-job.ts, which
 * `restricted` forbids) under the same egress rule.
 */

/** Never reachable from a tenant's pod, whatever the cluster: within 0.0.0.0/0, IPv4. */
export const BLOCKED_RANGES = NON_PUBLIC_IPV4_RANGES;

const MANAGED = {
  'app.kubernetes.io/part-of': 'platform',
  'app.kubernetes.io/managed-by': 'platform-deployments',
};

type PodSecurityLevel = 'restricted' | 'baseline';

function namespace(name: string, level: PodSecurityLevel, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: {
        ...MANAGED,
        ...labels,
        'app.kubernetes.io/name': name,
        'pod-security.kubernetes.io/enforce': level,
        'pod-security.kubernetes.io/enforce-version': 'latest',
        'pod-security.kubernetes.io/audit': level,
        'pod-security.kubernetes.io/warn': level,
      },
    },
  } satisfies K8sObject;
}

/** Nothing in or out of the namespace unless another policy allows it. */
function defaultDeny(name: string): K8sObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'default-deny', namespace: name, labels: MANAGED },
    spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
  };
}

/** Public addresses and the cluster DNS out; `ingress` in (none: nothing comes in). */
function tenantTraffic(
  settings: KubernetesRunnerSettings,
  name: string,
  ingress: unknown[],
): K8sObject {
  const except = [...BLOCKED_RANGES, ...settings.clusterCidrs];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'tenant-traffic', namespace: name, labels: MANAGED },
    spec: {
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      ingress,
      egress: [
        {
          to: [
            { ipBlock: { cidr: '0.0.0.0/0', except } },
            ...settings.egressAllow.map((cidr) => ({ ipBlock: { cidr } })),
          ],
        },
        {
          to: [
            {
              namespaceSelector: {
                matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' },
              },
              podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
            },
            ...settings.clusterDnsCidrs.map((cidr) => ({ ipBlock: { cidr } })),
          ],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    },
  };
}

/**
 * A project's namespace, made before its first release: `restricted` pod security, default deny,
 * the tenant traffic rule (in: the ingress controller on the app port only), its quota and the
 * limits of each container.
 */
export function projectNamespaceObjects(
  settings: KubernetesRunnerSettings,
  projectId: string,
): K8sObject[] {
  const name = appNamespaceOf(settings, projectId);
  const { cpu, memory, pods } = settings.projectQuota;
  return [
    namespace(name, 'restricted', { 'platform.dev/project-id': projectId }),
    defaultDeny(name),
    tenantTraffic(settings, name, [
      {
        from: [
          {
            namespaceSelector: {
              matchLabels: { 'kubernetes.io/metadata.name': settings.ingressControllerNamespace },
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: APP_PORT }],
      },
    ]),
    {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'project', namespace: name, labels: MANAGED },
      spec: {
        hard: {
          pods: String(pods),
          'requests.cpu': cpu,
          'limits.cpu': cpu,
          'requests.memory': memory,
          'limits.memory': memory,
          'requests.ephemeral-storage': '10Gi',
          services: '20',
          'services.loadbalancers': '0',
          'services.nodeports': '0',
          secrets: '100',
          configmaps: '20',
          persistentvolumeclaims: '0',
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'containers', namespace: name, labels: MANAGED },
      spec: {
        limits: [
          {
            type: 'Container',
            default: { cpu: settings.app.cpu, memory: settings.app.memory },
            defaultRequest: { cpu: settings.app.cpuRequest, memory: settings.app.memory },
            max: { cpu, memory },
          },
        ],
      },
    },
  ];
}

/** The builds' namespace, made once by the platform team: `baseline`, nothing comes in. */
export function buildNamespaceObjects(settings: KubernetesRunnerSettings): K8sObject[] {
  const name = settings.buildNamespace;
  return [namespace(name, 'baseline'), defaultDeny(name), tenantTraffic(settings, name, [])];
}
