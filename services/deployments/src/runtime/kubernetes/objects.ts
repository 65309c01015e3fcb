/**
 * The Kubernetes runner's objects (docs/kubernetes-runner.md): what every object the deployments
 * service creates in a cluster for a deployment shares: the runner's settings, the deployment it
 * is made for, the names and labels that find it again, and what its containers are given. The
 * objects themselves: a build's Job (build-job.ts, dockerfile-job.ts), a release's
 * (release-objects.ts), a project's namespace (tenancy.ts).
 */
import type { ServiceSettings } from '@platform/shared';

/** What every object has; the rest (spec, data…) is the kind's own. */
export type K8sObject = { apiVersion: string; kind: string; metadata: ObjectMeta } & Record<
  string,
  unknown
>;

interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
  /** Set on a write that must fail (409) if the object changed since it was read. */
  resourceVersion?: string;
}

/** The runner's settings: the cluster's side of the platform's configuration. */
export interface KubernetesRunnerSettings {
  /**
   * Where builds run: Pod Security `baseline`, which admits the capabilities kaniko needs
   * (dockerfile-job.ts), so not with the apps.
   */
  buildNamespace: string;
  /**
   * Each project's apps run in a namespace of their own, `<prefix>-<projectId>` (tenancy.ts:
   * pod security `restricted`, default-deny NetworkPolicies, a ResourceQuota and a LimitRange).
   */
  appNamespacePrefix: string;
  /** The ingress controller's namespace: the only one that may reach an app. */
  ingressControllerNamespace: string;
  /**
   * The cluster's own ranges (pod and service CIDRs, node addresses) beyond the private ones,
   * which tenants' pods may never reach.
   */
  clusterCidrs: string[];
  /**
   * Where the cluster DNS answers when it is not a `k8s-app: kube-dns` pod in kube-system (a
   * node-local DNS cache, or the local cluster's CoreDNS on its node): tenants' pods may reach
   * port 53 there, and nothing else of these addresses.
   */
  clusterDnsCidrs: string[];
  /** Non-public addresses tenants' pods may reach all the same (KUBE_EGRESS_ALLOW). */
  egressAllow: string[];
  /** What all the apps of one project may use together (ResourceQuota). */
  projectQuota: { cpu: string; memory: string; pods: number };
  /**
   * The registry the platform pushes to and the nodes pull from: a build's context image is
   * `<registry>/builds/<serviceId>:<deploymentId>`, the app's `<registry>/apps/<serviceId>:…`.
   */
  registry: string;
  /** A service answers at `https://<serviceId>.<appsDomain>`. */
  appsDomain: string;
  ingressClassName: string;
  /** The image apps are built on (they get Node and a shell). */
  baseImage: string;
  /** kaniko's executor, which builds a service's own Dockerfile (dockerfile-job.ts). */
  kanikoImage: string;
  /** The RuntimeClass of builds' and apps' pods (gVisor in production); none: the default. */
  runtimeClassName?: string;
  /**
   * A build's and an app's CPU limit (`cpu`) and what the scheduler reserves for it
   * (`cpuRequest`, a fraction: most apps idle, and a request of a whole core would fit a
   * handful per node); their memory is reserved as it is limited.
   */
  /** `disk`: the build's ephemeral storage (workspace, /tmp, its log); none: unlimited. */
  build: { cpu: string; cpuRequest: string; memory: string; disk?: string; timeoutSeconds: number };
  /** `disk`: the app's ephemeral storage (what it writes, and its log as the kubelet keeps it). */
  app: {
    cpu: string;
    cpuRequest: string;
    memory: string;
    disk: string;
    healthCheckTimeoutSeconds: number;
  };
}

/** What one deployment is: the snapshot taken at trigger, secrets opened for the run. */
export interface DeploymentSpec {
  deploymentId: string;
  serviceId: string;
  projectId: string;
  accountId: string;
  commitHash: string;
  repository: string;
  branch: string;
  rootDirectory: string;
  buildCommand: string | null;
  startCommand: string | null;
  healthCheckPath: string;
  variables: Record<string, string>;
  /** How many copies serve the service: the setting `replicas` (contracts.md: 1–10, default 1). */
  replicas?: ServiceSettings['replicas'];
  /** The service's Dockerfile (a path in the repository), built instead of `buildCommand`. */
  dockerfilePath?: ServiceSettings['dockerfilePath'];
}

/** Where an app listens inside its pod; `PORT` says so. */
export const APP_PORT = 8080;
/** The unprivileged user builds and apps run as. */
const APP_UID = 1000;

/** The name of a service's app objects (its Deployment, Service, Ingress). */
export const appName = (spec: Pick<DeploymentSpec, 'serviceId'>) => `app-${spec.serviceId}`;
/** The namespace of a project's apps. */
export const appNamespaceOf = (
  settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
  projectId: string,
) => `${settings.appNamespacePrefix}-${projectId}`;
/** The host a service answers at. */
export const hostOf = (
  settings: KubernetesRunnerSettings,
  spec: Pick<DeploymentSpec, 'serviceId'>,
) => `${spec.serviceId}.${settings.appsDomain}`;

/** What selects every app object the runner applies (Deployments, Services, pods), cluster-wide. */
export const APP_SELECTOR =
  'app.kubernetes.io/managed-by=platform-deployments,app.kubernetes.io/component=app';
/** The label of an app's objects naming its service. */
export const SERVICE_ID_LABEL = 'platform.dev/service-id';
/** The annotation (and, on an app's pods, the label) naming the deployment its template runs. */
export const DEPLOYMENT_ID = 'platform.dev/deployment-id';

/** What the build and the app see besides the variables (contracts.md). */
export function platformEnv(spec: DeploymentSpec): Record<string, string> {
  return {
    PLATFORM_DEPLOYMENT_ID: spec.deploymentId,
    PLATFORM_SERVICE_ID: spec.serviceId,
    PLATFORM_PROJECT_ID: spec.projectId,
    PLATFORM_COMMIT_HASH: spec.commitHash,
  };
}

/** A container under Pod Security `restricted`: the app user, no capability, no escalation. */
export const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  runAsUser: APP_UID,
  runAsGroup: APP_UID,
  seccompProfile: { type: 'RuntimeDefault' },
};
