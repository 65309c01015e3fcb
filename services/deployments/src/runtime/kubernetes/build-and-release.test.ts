import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOrStartCluster, k8s, kubeConfigOf, Registry, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { AppImages } from './app-images';
import { pushBuildContext } from './build-job';
import { KubernetesBuilds } from './builds';
import { appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import {
  deleteBuildNamespace,
  deleteProjectNamespace,
  testDeployment,
  testId,
  testRunnerSettings,
} from './testing';
import { KubernetesReleases } from './releases';

/**
 * A deployment's two steps on a real cluster, end to end (not yet through the pipeline): the
 * checkout is built by a Job, what the build made becomes the app's image (copied out through the
 * API server and pushed by the platform), and the release of that image answers at its Service
 * with what the build wrote.
 */

describe('Kubernetes build then release', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let checkout: string;

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster);
    checkout = mkdtempSync(path.join(os.tmpdir(), 'checkout-'));
    writeFileSync(
      path.join(checkout, 'package.json'),
      JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        scripts: { build: 'node build.js', start: 'node dist/server.js' },
      }),
    );
    // The server exists only once the build made it, and says what the build saw.
    writeFileSync(
      path.join(checkout, 'build.js'),
      `const fs = require('node:fs');
fs.mkdirSync('dist');
fs.writeFileSync('dist/server.js', "require('node:http').createServer((q, r) => r.end('built by ' + " +
  JSON.stringify(process.env.PLATFORM_DEPLOYMENT_ID) + " + ', running ' + process.env.PLATFORM_DEPLOYMENT_ID)).listen(process.env.PORT);");`,
    );
  }, 50 * 60_000);

  afterAll(async () => {
    rmSync(checkout, { recursive: true, force: true });
    await deleteBuildNamespace(cluster, settings);
    await deleteProjectNamespace(cluster, settings, projectId);
  });

  const projectId = testId();

  test('the build Job makes the app, whose image the release runs and serves', async () => {
    const registry = new Registry(cluster.registry);
    const spec = testDeployment({
      projectId,
      buildCommand: 'npm run build',
      startCommand: 'npm start',
    });
    const builds = new KubernetesBuilds(kubeConfigOf(cluster), settings);
    await builds.start(spec, await pushBuildContext(registry, settings, spec, checkout));
    let output = '';
    const built = await builds.follow(spec, (text) => (output += text));
    expect(built.state).toBe('succeeded');
    expect(output).toContain('node build.js');

    const image = await new AppImages(registry, settings).push(spec, built.workspace!);
    expect(image).toMatch(new RegExp(`^${cluster.registry}/apps/${spec.serviceId}@sha256:`));
    const releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
    expect(await releases.deploy({ spec, image })).toEqual({ outcome: 'DEPLOYED' });

    const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
    const service = await core.readNamespacedService({
      name: `app-${spec.serviceId}`,
      namespace: appNamespaceOf(settings, projectId),
    });
    const answer = await waitFor(
      async () => (await fetch(`http://${service.spec?.clusterIP}/`)).text(),
      { timeoutMs: 30_000, what: 'the release to answer at its Service' },
    );
    expect(answer).toBe(`built by ${spec.deploymentId}, running ${spec.deploymentId}`);
  }, 900_000);
});
