import { randomBytes } from 'node:crypto';
import type { Cluster } from '@platform/kube';
import type { KubernetesRunnerSettings } from './objects';

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
    registrySecret: 'registry',
    baseImage: cluster.nodeImage,
    buildkitImage: 'unused',
    gitImage: 'unused',
    build: { cpu: '1', memory: '512Mi', timeoutSeconds: 600 },
    app: { cpu: '200m', memory: '128Mi', healthCheckTimeoutSeconds: 300, ...overrides.app },
  };
}
