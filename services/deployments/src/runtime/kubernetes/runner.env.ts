import { z } from 'zod';
import { durationEnv } from '@platform/shared';
import type { KubernetesRunnerSettings } from './objects';

/**
 * The settings of the runtime apps run in (docs/kubernetes-runner.md). `local` (default): the
 * local runtime's supervisor and the bubblewrap sandbox on this service's host. `kubernetes`:
 * builds as Jobs and apps as Deployments in the cluster KUBECONFIG names (else the one this
 * service runs in: its ServiceAccount, k8s/base/deployments-runner.yaml).
 */
/** A comma-separated list of CIDRs (empty: none). */
const cidrList = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((cidr) => cidr.trim())
      .filter(Boolean),
  );

export const kubernetesRunnerEnv = z.object({
  RUNTIME: z.enum(['local', 'kubernetes']).default('local'),
  /** A kubeconfig file; unset: the in-cluster ServiceAccount. */
  KUBECONFIG: z.string().min(1).optional(),
  /** `host:port` of the registry the platform pushes to and the cluster's nodes pull from. */
  KUBE_REGISTRY: z.string().min(1).default('127.0.0.1:5000'),
  /** The image builds and apps run on (Node, npm, sh; uid 1000). Default: in KUBE_REGISTRY. */
  KUBE_NODE_IMAGE: z.string().min(1).optional(),
  /** kaniko's image (scripts/infra/kube/kaniko.sh); default `<registry>/platform/kaniko:v1.23.2`. */
  KUBE_KANIKO_IMAGE: z.string().min(1).optional(),
  /** Each project's apps run in the namespace `<prefix>-<projectId>`. */
  KUBE_APP_NAMESPACE_PREFIX: z
    .string()
    .regex(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/, 'a DNS label of at most 22 characters')
    .default('platform-apps'),
  /** Where build Jobs run. */
  KUBE_BUILD_NAMESPACE: z.string().min(1).default('platform-builds'),
  /** The namespace of the platform's router (the only one an app accepts traffic from). */
  KUBE_ROUTER_NAMESPACE: z.string().min(1).default('platform'),
  /**
   * The RuntimeClass of builds' and apps' pods (gVisor's `gvisor` in production, k8s/README.md);
   * unset: the cluster's default runtime.
   */
  KUBE_RUNTIME_CLASS: z.string().min(1).optional(),
  /** The cluster's own ranges (pods, Services, nodes) a tenant's pod may never reach. */
  KUBE_CLUSTER_CIDRS: cidrList.default('10.244.0.0/16,10.96.0.0/12'),
  /**
   * The cluster DNS's addresses when it is not a kube-dns pod (node-local DNS; the local cluster's
   * CoreDNS on its node, `infra url kube`): port 53 there is open to tenants' pods.
   */
  KUBE_DNS_CIDRS: cidrList,
  /**
   * Addresses outside the public ranges that tenants' pods may reach all the same: where the
   * package registries answer on a network that puts them behind a proxy at a reserved address
   * (this machine: scripts/infra/registry-egress.sh, the sandbox's SANDBOX_EGRESS_ALLOW).
   */
  KUBE_EGRESS_ALLOW: cidrList,
  /** What all the apps of one project may use together (its ResourceQuota). */
  KUBE_PROJECT_CPU: z.string().min(1).default('4'),
  KUBE_PROJECT_MEMORY: z.string().min(1).default('4Gi'),
  KUBE_PROJECT_PODS: z.coerce.number().int().positive().default(30),
  /** The Ingress of a service names `<serviceId>.<APPS_DOMAIN>` (the gateway's APPS_HOST_SUFFIX). */
  APPS_DOMAIN: z.string().min(1).default('localhost'),
  /**
   * The CPU the scheduler reserves for an app's pod and a build's (their limits are
   * RUNTIME_APP_CPUS and BUILD_CPUS): a fraction, so that a node holds more than a few.
   */
  KUBE_APP_CPU_REQUEST: z.string().min(1).default('50m'),
  KUBE_BUILD_CPU_REQUEST: z.string().min(1).default('250m'),
  /** How long a build Job may run (its activeDeadlineSeconds). */
  KUBE_BUILD_TIMEOUT: durationEnv('10m', { min: '1s' }),
});

export type KubernetesRunnerEnv = z.infer<typeof kubernetesRunnerEnv>;

const NODE_IMAGE_TAG = 'platform/node:22.23.3';
/** As scripts/infra/kube/kaniko.sh pushes it. */
export const KANIKO_IMAGE_TAG = 'platform/kaniko:v1.23.2';

/**
 * What of an app's ephemeral storage its log may take: the kubelet keeps up to 5 files of 10 MiB
 * of a container's log by default, and counts them against the container's limit.
 */
const APP_LOG_BYTES = 50 * 1024 ** 2;

/** Kubernetes quantities of the limits the local runtime and builds already have. */
const cpuQuantity = (cpus: number) => `${Math.round(cpus * 1000)}m`;
const memoryQuantity = (bytes: number) => `${Math.ceil(bytes / 1024 ** 2)}Mi`;

/** The runner's settings from the service's configuration. */
export function runnerSettingsOf(
  env: KubernetesRunnerEnv & {
    HEALTH_CHECK_TIMEOUT: number;
    BUILD_CPUS: number;
    BUILD_MEMORY_BYTES: number;
    RUNTIME_APP_CPUS: number;
    RUNTIME_APP_MEMORY_BYTES: number;
    RUNTIME_APP_TMP_BYTES: number;
    BUILD_DISK_BYTES: number;
  },
): KubernetesRunnerSettings {
  return {
    buildNamespace: env.KUBE_BUILD_NAMESPACE,
    appNamespacePrefix: env.KUBE_APP_NAMESPACE_PREFIX,
    ingressControllerNamespace: env.KUBE_ROUTER_NAMESPACE,
    clusterCidrs: env.KUBE_CLUSTER_CIDRS,
    clusterDnsCidrs: env.KUBE_DNS_CIDRS,
    egressAllow: env.KUBE_EGRESS_ALLOW,
    projectQuota: {
      cpu: env.KUBE_PROJECT_CPU,
      memory: env.KUBE_PROJECT_MEMORY,
      pods: env.KUBE_PROJECT_PODS,
    },
    registry: env.KUBE_REGISTRY,
    appsDomain: env.APPS_DOMAIN,
    ingressClassName: 'platform',
    baseImage: env.KUBE_NODE_IMAGE ?? `${env.KUBE_REGISTRY}/${NODE_IMAGE_TAG}`,
    kanikoImage: env.KUBE_KANIKO_IMAGE ?? `${env.KUBE_REGISTRY}/${KANIKO_IMAGE_TAG}`,
    ...(env.KUBE_RUNTIME_CLASS && { runtimeClassName: env.KUBE_RUNTIME_CLASS }),
    build: {
      cpu: cpuQuantity(env.BUILD_CPUS),
      cpuRequest: env.KUBE_BUILD_CPU_REQUEST,
      memory: memoryQuantity(env.BUILD_MEMORY_BYTES),
      ...(env.BUILD_DISK_BYTES > 0 && { disk: memoryQuantity(env.BUILD_DISK_BYTES) }),
      timeoutSeconds: Math.ceil(env.KUBE_BUILD_TIMEOUT / 1000),
    },
    app: {
      cpu: cpuQuantity(env.RUNTIME_APP_CPUS),
      cpuRequest: env.KUBE_APP_CPU_REQUEST,
      memory: memoryQuantity(env.RUNTIME_APP_MEMORY_BYTES),
      disk: memoryQuantity(env.RUNTIME_APP_TMP_BYTES + APP_LOG_BYTES),
      healthCheckTimeoutSeconds: Math.ceil(env.HEALTH_CHECK_TIMEOUT / 1000),
    },
  };
}
