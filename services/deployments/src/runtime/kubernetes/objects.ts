/**
 * The Kubernetes runner's objects (docs/kubernetes-runner.md): what the deployments service would
 * create in a cluster for one deployment. Pure functions of the deployment and the runner's
 * settings, so they are checked here against the API server's own validation
 * (tools/manifest-check) without a cluster.
 *
 * - A build is a Job: an init container fetches exactly the commit, then BuildKit (rootless,
 *   daemonless) builds an image from a Dockerfile the platform writes (the service's base image,
 *   its build command run with the variables mounted as a build secret, so no layer holds them)
 *   and pushes it to the registry. Cancel deletes the Job (foreground: its pod goes with it).
 * - A release is a server-side apply of the service's Deployment (one per service, the image of
 *   the deployment, rolling with no unavailable replica, ready on the health check), its Service
 *   and its Ingress (`<serviceId>.<appsDomain>`, the stable URL); the variables in a Secret of the
 *   deployment.
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
  /** Where builds run: BuildKit needs an unconfined seccomp profile, so not with the apps. */
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
  /** Images are pushed to `<registry>/<serviceId>:<deploymentId>`. */
  registry: string;
  /** A service answers at `https://<serviceId>.<appsDomain>`. */
  appsDomain: string;
  ingressClassName: string;
  /** A Secret in buildNamespace with the registry credentials (`config.json`), for pushing. */
  registrySecret: string;
  /** The image apps are built on (they get Node and a shell). */
  baseImage: string;
  buildkitImage: string;
  /** kaniko's executor, which builds a service's own Dockerfile (dockerfile-job.ts). */
  kanikoImage: string;
  gitImage: string;
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

/** How long a replaced app pod goes on serving before it is stopped (see its preStop). */
export const PRE_STOP_SECONDS = 5;

/** Where an app listens inside its pod; `PORT` says so. */
export const APP_PORT = 8080;
/** The unprivileged user builds and apps run as. */
const APP_UID = 1000;

const buildName = (spec: DeploymentSpec) => `build-${spec.deploymentId}`;
const appName = (spec: Pick<DeploymentSpec, 'serviceId'>) => `app-${spec.serviceId}`;
export const imageOf = (settings: KubernetesRunnerSettings, spec: DeploymentSpec) =>
  `${settings.registry}/${spec.serviceId}:${spec.deploymentId}`;
/** The namespace of a project's apps. */
export const appNamespaceOf = (
  settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
  projectId: string,
) => `${settings.appNamespacePrefix}-${projectId}`;
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

function labels(spec: DeploymentSpec, component: 'build' | 'app'): Record<string, string> {
  return {
    'app.kubernetes.io/name': appName(spec),
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/managed-by': 'platform-deployments',
    [SERVICE_ID_LABEL]: spec.serviceId,
    'platform.dev/project-id': spec.projectId,
    'platform.dev/account-id': spec.accountId,
  };
}

/** What the build and the app see besides the variables (contracts.md). */
export function platformEnv(spec: DeploymentSpec): Record<string, string> {
  return {
    PLATFORM_DEPLOYMENT_ID: spec.deploymentId,
    PLATFORM_SERVICE_ID: spec.serviceId,
    PLATFORM_PROJECT_ID: spec.projectId,
    PLATFORM_COMMIT_HASH: spec.commitHash,
  };
}

/** KEY='value' lines a POSIX shell sources: every value single-quoted. */
function envFile(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}='${value.replace(/'/g, `'\\''`)}'\n`)
    .join('');
}

export const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  runAsUser: APP_UID,
  runAsGroup: APP_UID,
  seccompProfile: { type: 'RuntimeDefault' },
};

/**
 * The Dockerfile of a deployment's image. Commands go in exec form as JSON strings, so nothing a
 * tenant writes is parsed by the Dockerfile grammar; the variables come from a build secret that
 * is sourced for the build command only and is in no layer.
 */
export function dockerfileOf(settings: KubernetesRunnerSettings, spec: DeploymentSpec): string {
  const workdir = ['/workspace', spec.rootDirectory].filter(Boolean).join('/');
  const lines = [
    '# syntax=docker/dockerfile:1',
    `FROM ${settings.baseImage}`,
    `COPY --chown=${APP_UID}:${APP_UID} . /workspace`,
    `WORKDIR ${workdir}`,
    `USER ${APP_UID}:${APP_UID}`,
  ];
  if (spec.buildCommand) {
    const script = `set -a; . /run/secrets/env; set +a; ${spec.buildCommand}`;
    lines.push(
      `RUN --mount=type=secret,id=env,uid=${APP_UID} ${JSON.stringify(['sh', '-c', script])}`,
    );
  }
  lines.push(`ENV PORT=${APP_PORT}`);
  // After `--`: a command starting with `-` is never an option of sh.
  if (spec.startCommand) lines.push(`CMD ${JSON.stringify(['sh', '-c', '--', spec.startCommand])}`);
  return `${lines.join('\n')}\n`;
}

/** The build of a deployment: its Dockerfile, its variables and the Job that builds and pushes. */
export function buildObjects(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
): K8sObject[] {
  const name = buildName(spec);
  const namespace = settings.buildNamespace;
  const meta = { name, namespace, labels: labels(spec, 'build') };
  const gitScript = [
    'set -eu',
    'git init -q /workspace',
    'git -C /workspace fetch -q --depth 1 --no-tags "$REPOSITORY" "$COMMIT_HASH"',
    'git -C /workspace checkout -q --detach FETCH_HEAD',
    'test "$(git -C /workspace rev-parse HEAD)" = "$COMMIT_HASH"',
    'rm -rf /workspace/.git',
  ].join('\n');
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta,
      data: { Dockerfile: dockerfileOf(settings, spec) },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta,
      type: 'Opaque',
      stringData: { env: envFile({ ...spec.variables, ...platformEnv(spec) }) },
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { ...meta, annotations: { 'platform.dev/deployment-id': spec.deploymentId } },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: settings.build.timeoutSeconds,
        ttlSecondsAfterFinished: 3600,
        template: {
          metadata: { labels: labels(spec, 'build') },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: { fsGroup: APP_UID },
            initContainers: [
              {
                name: 'fetch',
                image: settings.gitImage,
                command: ['sh', '-c', gitScript],
                env: [
                  { name: 'REPOSITORY', value: spec.repository },
                  { name: 'COMMIT_HASH', value: spec.commitHash },
                  { name: 'GIT_TERMINAL_PROMPT', value: '0' },
                  { name: 'HOME', value: '/tmp' },
                ],
                volumeMounts: [
                  { name: 'workspace', mountPath: '/workspace' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
                resources: { limits: { cpu: '500m', memory: '256Mi' } },
                securityContext: RESTRICTED_CONTAINER,
              },
            ],
            containers: [
              {
                name: 'build',
                image: settings.buildkitImage,
                command: ['buildctl-daemonless.sh'],
                args: [
                  'build',
                  '--frontend=dockerfile.v0',
                  '--local=context=/workspace',
                  '--local=dockerfile=/dockerfile',
                  '--secret=id=env,src=/secrets/env',
                  `--output=type=image,name=${imageOf(settings, spec)},push=true`,
                ],
                env: [
                  { name: 'BUILDKITD_FLAGS', value: '--oci-worker-no-process-sandbox' },
                  { name: 'DOCKER_CONFIG', value: '/registry' },
                ],
                volumeMounts: [
                  { name: 'workspace', mountPath: '/workspace', readOnly: true },
                  { name: 'dockerfile', mountPath: '/dockerfile', readOnly: true },
                  { name: 'variables', mountPath: '/secrets', readOnly: true },
                  { name: 'registry', mountPath: '/registry', readOnly: true },
                  { name: 'buildkit', mountPath: '/home/user/.local/share/buildkit' },
                ],
                resources: {
                  requests: { cpu: settings.build.cpuRequest, memory: settings.build.memory },
                  limits: { cpu: settings.build.cpu, memory: settings.build.memory },
                },
                // Rootless BuildKit needs its own user namespace: no seccomp or AppArmor filter.
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: APP_UID,
                  runAsGroup: APP_UID,
                  seccompProfile: { type: 'Unconfined' },
                  appArmorProfile: { type: 'Unconfined' },
                },
              },
            ],
            volumes: [
              { name: 'workspace', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
              { name: 'buildkit', emptyDir: {} },
              { name: 'dockerfile', configMap: { name } },
              { name: 'variables', secret: { secretName: name } },
              {
                name: 'registry',
                secret: {
                  secretName: settings.registrySecret,
                  items: [{ key: '.dockerconfigjson', path: 'config.json' }],
                },
              },
            ],
          },
        },
      },
    },
  ];
}

/** How a cancel stops a build: the Job, its pod with it. */
export const cancelBuild = (settings: KubernetesRunnerSettings, spec: DeploymentSpec) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  namespace: settings.buildNamespace,
  name: buildName(spec),
  propagationPolicy: 'Foreground' as const,
});

/**
 * A release: applied server-side, field manager `platform-deployments`. `image` is what the
 * build pushed, by digest (default: the deployment's tag).
 */
export function releaseObjects(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  image = imageOf(settings, spec),
): K8sObject[] {
  const name = appName(spec);
  const namespace = appNamespaceOf(settings, spec.projectId);
  const appLabels = labels(spec, 'app');
  const selector = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'app' };
  const envSecret = `env-${spec.deploymentId}`;
  const probe = { httpGet: { path: spec.healthCheckPath, port: APP_PORT } };
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: envSecret, namespace, labels: appLabels },
      type: 'Opaque',
      stringData: spec.variables,
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace,
        labels: appLabels,
        annotations: { 'platform.dev/deployment-id': spec.deploymentId },
      },
      spec: {
        replicas: spec.replicas ?? 1,
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: settings.app.healthCheckTimeoutSeconds,
        selector: { matchLabels: selector },
        // Zero downtime: the new pod must be ready before the old one goes.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        template: {
          metadata: {
            // The deployment id is a label of the pods (to read a release's logs), never of the
            // selector: a new release is a rollout of the same Deployment.
            labels: { ...appLabels, ...selector, [DEPLOYMENT_ID]: spec.deploymentId },
            annotations: { [DEPLOYMENT_ID]: spec.deploymentId },
          },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            ...(settings.runtimeClassName && { runtimeClassName: settings.runtimeClassName }),
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'app',
                image,
                ports: [{ name: 'http', containerPort: APP_PORT }],
                env: Object.entries({ PORT: String(APP_PORT), ...platformEnv(spec) }).map(
                  ([envName, value]) => ({ name: envName, value }),
                ),
                envFrom: [{ secretRef: { name: envSecret } }],
                readinessProbe: { ...probe, periodSeconds: 2, failureThreshold: 3 },
                // A replaced pod answers on while kube-proxy takes it out of the Service (a sync
                // later): only then does it get SIGTERM, so no visitor meets a closed port.
                lifecycle: { preStop: { sleep: { seconds: PRE_STOP_SECONDS } } },
                resources: {
                  requests: { cpu: settings.app.cpuRequest, memory: settings.app.memory },
                  limits: {
                    cpu: settings.app.cpu,
                    memory: settings.app.memory,
                    'ephemeral-storage': settings.app.disk,
                  },
                },
                securityContext: RESTRICTED_CONTAINER,
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels: appLabels },
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace, labels: appLabels },
      spec: {
        ingressClassName: settings.ingressClassName,
        rules: [
          {
            host: hostOf(settings, spec),
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name, port: { name: 'http' } } },
                },
              ],
            },
          },
        ],
      },
    },
  ];
}

/** Where a deployment stands, read off its Kubernetes objects. */
export type RolloutOutcome = 'DEPLOYING' | 'DEPLOYED' | 'FAILED';

interface DeploymentStatusView {
  metadata: { generation?: number };
  spec: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/**
 * The release's rollout, as `kubectl rollout status` reads it: DEPLOYED once the controller has
 * seen this generation and every replica is the new one and available (no old pod left);
 * FAILED when the progress deadline (the health-check timeout) passed; DEPLOYING otherwise.
 */
export function rolloutOutcome(deployment: DeploymentStatusView): RolloutOutcome {
  const status = deployment.status ?? {};
  const wanted = deployment.spec.replicas ?? 1;
  if ((status.observedGeneration ?? 0) < (deployment.metadata.generation ?? 1)) return 'DEPLOYING';
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return 'FAILED';
  }
  const done =
    (status.updatedReplicas ?? 0) === wanted &&
    (status.availableReplicas ?? 0) >= wanted &&
    (status.replicas ?? 0) === wanted;
  return done ? 'DEPLOYED' : 'DEPLOYING';
}

/** A build Job's outcome: running until it completes or fails (a timeout is a failure). */
export function buildOutcome(job: {
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}): { state: 'running' | 'succeeded' | 'failed'; reason?: string } {
  const conditions = job.status?.conditions ?? [];
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  if (holds('Complete')) return { state: 'succeeded' };
  const failed = holds('Failed');
  if (failed) return { state: 'failed', reason: failed.reason ?? 'Failed' };
  return { state: 'running' };
}
