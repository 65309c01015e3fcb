import {
  APP_PORT,
  appName,
  appNamespaceOf,
  DEPLOYMENT_ID,
  hostOf,
  platformEnv,
  RESTRICTED_CONTAINER,
  SERVICE_ID_LABEL,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';

/**
 * A release's objects (docs/kubernetes-runner.md, DEPLOYING): the service's Deployment (one per
 * service, the image of the deployment, rolling with no unavailable replica, ready on the health
 * check), its Service and its Ingress (`<serviceId>.<appsDomain>`, the stable URL), and the
 * deployment's variables in a Secret of its own. releases.ts applies them.
 */

/** How long a replaced app pod goes on serving before it is stopped (see its preStop). */
export const PRE_STOP_SECONDS = 5;

/** The labels of a release's objects: the app's, its service's, project's and account's. */
function appLabels(spec: DeploymentSpec): Record<string, string> {
  return {
    'app.kubernetes.io/name': appName(spec),
    'app.kubernetes.io/component': 'app',
    'app.kubernetes.io/managed-by': 'platform-deployments',
    [SERVICE_ID_LABEL]: spec.serviceId,
    'platform.dev/project-id': spec.projectId,
    'platform.dev/account-id': spec.accountId,
  };
}

/**
 * A release: applied server-side, field manager `platform-deployments`. `image` is what the
 * build pushed, by digest (app-images.ts).
 */
export function releaseObjects(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  image: string,
): K8sObject[] {
  const name = appName(spec);
  const namespace = appNamespaceOf(settings, spec.projectId);
  const labels = appLabels(spec);
  const selector = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'app' };
  const envSecret = `env-${spec.deploymentId}`;
  const probe = { httpGet: { path: spec.healthCheckPath, port: APP_PORT } };
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: envSecret, namespace, labels },
      type: 'Opaque',
      stringData: spec.variables,
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace,
        labels,
        annotations: { [DEPLOYMENT_ID]: spec.deploymentId },
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
            labels: { ...labels, ...selector, [DEPLOYMENT_ID]: spec.deploymentId },
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
      metadata: { name, namespace, labels },
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace, labels },
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
