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
  registry: 'registry.example.com/apps',
  appsDomain: 'apps.example.com',
  ingressClassName: 'nginx',
  registrySecret: 'registry-push',
  baseImage: 'node:20-bookworm-slim',
  buildkitImage: 'moby/buildkit:v0.27.1-rootless',
  kanikoImage: '127.0.0.1:5000/platform/kaniko:v1.23.2',
  gitImage: 'alpine/git:v2.47.2',
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
