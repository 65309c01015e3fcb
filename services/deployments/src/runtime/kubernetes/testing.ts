import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { k8s, kubeConfigOf, Registry, type Cluster } from '@platform/kube';
import { appNamespaceOf, type DeploymentSpec, type KubernetesRunnerSettings } from './objects';
import type { Release } from './releases';
import { KANIKO_IMAGE_TAG } from './runner.env';

/**
 * The runner's settings for a test on the local cluster: its registry and Node base image, and
 * namespaces of the test's own (a random suffix), so that test files running at once never share
 * one. `app` and `build` override the limits and deadlines a test needs.
 */
export function testRunnerSettings(
  cluster: Cluster,
  overrides: {
    buildNamespace?: string;
    app?: Partial<KubernetesRunnerSettings['app']>;
  } = {},
): KubernetesRunnerSettings {
  const suffix = randomBytes(3).toString('hex');
  return {
    buildNamespace: overrides.buildNamespace ?? `rt-builds-${suffix}`,
    appNamespacePrefix: `rt-${suffix}`,
    ingressControllerNamespace: 'platform-router',
    clusterCidrs: ['10.244.0.0/16', '10.96.0.0/16'],
    // The local cluster's CoreDNS runs on its node (scripts/infra/kube/config.sh).
    clusterDnsCidrs: cluster.dnsCidrs.split(',').filter(Boolean),
    egressAllow: [],
    projectQuota: { cpu: '2', memory: '1Gi', pods: 10 },
    registry: cluster.registry,
    appsDomain: 'apps.localhost',
    ingressClassName: 'platform',
    baseImage: cluster.nodeImage,
    kanikoImage: `${cluster.registry}/${KANIKO_IMAGE_TAG}`,
    build: { cpu: '1', cpuRequest: '100m', memory: '512Mi', disk: '1Gi', timeoutSeconds: 600 },
    app: {
      cpu: '200m',
      cpuRequest: '50m',
      memory: '128Mi',
      disk: '114Mi',
      healthCheckTimeoutSeconds: 300,
      ...overrides.app,
    },
  };
}

/** An id as the platform makes them (24 hexadecimal digits). */
export const testId = () => randomBytes(12).toString('hex');

/** A deployment of a new service of a new project (ids as the platform makes them), `overrides` over it. */
export function testDeployment(overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    deploymentId: testId(),
    serviceId: testId(),
    projectId: testId(),
    accountId: testId(),
    commitHash: 'a'.repeat(40),
    repository: 'https://example.invalid/repo.git',
    branch: 'main',
    rootDirectory: '',
    buildCommand: null,
    startCommand: null,
    healthCheckPath: '/',
    variables: {},
    ...overrides,
  };
}

/**
 * A release of a service whose app is `script` (run by `node -e` on the Node base image), its
 * image pushed to the cluster's registry without a build; a new deployment id each time.
 */
export async function scriptRelease(
  cluster: Cluster,
  spec: Pick<DeploymentSpec, 'serviceId' | 'projectId'> & Partial<DeploymentSpec>,
  script: string,
): Promise<Release> {
  const full = testDeployment(spec);
  const image = await new Registry(cluster.registry).appendImage(
    cluster.nodeImage,
    `apps/${full.serviceId}`,
    full.deploymentId,
    [],
    { cmd: ['-e', script] },
  );
  return { spec: full, image: image.reference };
}

/** Deletes a namespace if it is there. */
async function deleteNamespace(cluster: Cluster, name: string): Promise<void> {
  await kubeConfigOf(cluster)
    .makeApiClient(k8s.CoreV1Api)
    .deleteNamespace({ name })
    .catch(() => undefined);
}

/** Deletes a test project's namespace, and so all that ran in it (afterAll). */
export async function deleteProjectNamespace(
  cluster: Cluster,
  settings: KubernetesRunnerSettings,
  projectId: string,
): Promise<void> {
  await deleteNamespace(cluster, appNamespaceOf(settings, projectId));
}

/** Deletes a test's builds' namespace, and so its Jobs and their pods (afterAll). */
export async function deleteBuildNamespace(
  cluster: Cluster,
  settings: KubernetesRunnerSettings,
): Promise<void> {
  await deleteNamespace(cluster, settings.buildNamespace);
}

/** A checkout of a fixture whose `npm run build` is `node build.js` with this source. */
export function fixtureCheckout(buildJs: string): string {
  const checkout = mkdtempSync(path.join(os.tmpdir(), 'checkout-'));
  writeFileSync(
    path.join(checkout, 'package.json'),
    JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { build: 'node build.js' } }),
  );
  writeFileSync(path.join(checkout, 'build.js'), buildJs);
  return checkout;
}
