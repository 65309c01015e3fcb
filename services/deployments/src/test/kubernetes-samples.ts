import type { DeploymentSpec, KubernetesRunnerSettings } from '../runtime/kubernetes/objects';

/** A cluster's runner settings, for tests of the generated objects (here and in manifest-check). */
export const sampleRunnerSettings: KubernetesRunnerSettings = {
  buildNamespace: 'platform-builds',
  appNamespacePrefix: 'tenant',
  ingressControllerNamespace: 'ingress-nginx',
  clusterCidrs: ['10.96.0.0/12', '10.244.0.0/16'],
  clusterDnsCidrs: [],
  egressAllow: [],
  projectQuota: { cpu: '4', memory: '4Gi', pods: 20 },
  registry: 'registry.example.com',
  appsDomain: 'apps.example.com',
  ingressClassName: 'nginx',
  baseImage: 'registry.example.com/platform/node:22.23.3',
  kanikoImage: 'registry.example.com/platform/kaniko:v1.23.2',
  build: { cpu: '1', cpuRequest: '250m', memory: '2Gi', disk: '4096Mi', timeoutSeconds: 600 },
  app: {
    cpu: '500m',
    cpuRequest: '50m',
    memory: '512Mi',
    disk: '114Mi',
    healthCheckTimeoutSeconds: 60,
  },
};

/** A deployment of a service with every setting, `overrides` over it. */
export const sampleDeployment = (overrides: Partial<DeploymentSpec> = {}): DeploymentSpec => ({
  deploymentId: '6650f1c2a9b3c4d5e6f70812',
  serviceId: '6650f1c2a9b3c4d5e6f70001',
  projectId: '6650f1c2a9b3c4d5e6f70002',
  accountId: 'acct-1',
  commitHash: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  repository: 'https://git.example.com/team/app.git',
  branch: 'main',
  rootDirectory: 'web',
  buildCommand: 'npm ci && npm run build',
  startCommand: 'node server.js',
  healthCheckPath: '/healthz',
  variables: { GREETING: "it's me", API_TOKEN: 'tok-secret-123' },
  ...overrides,
});

/** The image a build pushed for `spec`, by digest, as a release runs it (app-images.ts). */
export const sampleImage = (spec: Pick<DeploymentSpec, 'serviceId'>) =>
  `${sampleRunnerSettings.registry}/apps/${spec.serviceId}@sha256:${'e'.repeat(64)}`;

/** The build's context image for `spec`, by digest, as a build Job runs it (build-job.ts). */
export const sampleContextImage = (spec: Pick<DeploymentSpec, 'serviceId'>) =>
  `${sampleRunnerSettings.registry}/builds/${spec.serviceId}@sha256:${'c'.repeat(64)}`;
