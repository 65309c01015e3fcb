import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOrStartCluster, k8s, kubeConfigOf, Registry, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { AppImages } from './app-images';
import { KubernetesBuilds } from './builds';
import { pushDockerfileContext } from './dockerfile-job';
import { appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import { KubernetesReleases } from './releases';
import {
  deleteBuildNamespace,
  deleteProjectNamespace,
  testDeployment,
  testId,
  testRunnerSettings,
} from './testing';

/**
 * A service's own Dockerfile on a real cluster (docs/kubernetes-runner.md, "A repository's own
 * Dockerfile"): kaniko in the build Job's pod (its own user namespace) builds it from the
 * platform's base image handed in by the platform, RUN steps and all, with the deployment's
 * variables as build arguments; the image it wrote is pushed by the platform and released, and
 * answers with what its RUN step made. A RUN step that fails fails the build with its output.
 * Needs runc >= 1.2 on the node (scripts/infra/kube since this test; an older cluster never starts
 * the pod: "runtime does not support user namespaces").
 */

const DOCKERFILE = `FROM platform/node:22.23.3
ARG GREETING
USER root
COPY app/ /srv/app/
RUN echo "RUN as uid $(id -u) with $GREETING" && echo "built with $GREETING" > /srv/app/greeting.txt
USER node
ENTRYPOINT ["node", "/srv/app/server.js"]
`;
const SERVER = `const fs = require('node:fs');
require('node:http').createServer((q, r) => r.end(fs.readFileSync('/srv/app/greeting.txt', 'utf8').trim() + ', serving as uid ' + process.getuid())).listen(process.env.PORT);
`;

describe('a Dockerfile built by kaniko in a Job', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let checkout: string;
  const projectId = testId();

  const specOf = (dockerfilePath: string) =>
    testDeployment({ projectId, variables: { GREETING: 'hello there' }, dockerfilePath });

  /** Builds the checkout's Dockerfile at `file` to its end; its lines and result. */
  const build = async (file: string) => {
    const spec = specOf(file);
    const pushed = await pushDockerfileContext(
      new Registry(cluster.registry),
      settings,
      { ...spec, dockerfilePath: file },
      checkout,
    );
    if ('problem' in pushed) throw new Error(pushed.problem);
    const builds = new KubernetesBuilds(kubeConfigOf(cluster), settings);
    await builds.start(spec, pushed.image);
    let output = '';
    const result = await builds.follow(spec, (text) => (output += text));
    return { spec, lines: output.split('\n'), result };
  };

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster, { app: { healthCheckTimeoutSeconds: 60 } });
    checkout = mkdtempSync(path.join(os.tmpdir(), 'checkout-'));
    mkdirSync(path.join(checkout, 'docker'));
    mkdirSync(path.join(checkout, 'app'));
    writeFileSync(path.join(checkout, 'docker/Dockerfile'), DOCKERFILE);
    writeFileSync(path.join(checkout, 'app/server.js'), SERVER);
    writeFileSync(
      path.join(checkout, 'failing.Dockerfile'),
      'FROM platform/node:22.23.3\nRUN echo "about to fail" && exit 3\n',
    );
  }, 50 * 60_000);

  afterAll(async () => {
    rmSync(checkout, { recursive: true, force: true });
    await deleteBuildNamespace(cluster, settings);
    await deleteProjectNamespace(cluster, settings, projectId);
  });

  test('its RUN steps run as the Dockerfile says, and its image is released and answers', async () => {
    const { spec, lines, result } = await build('docker/Dockerfile');

    expect(result.state).toBe('succeeded');
    expect(lines).toContain('RUN as uid 0 with hello there');
    const image = await new AppImages(new Registry(cluster.registry), settings).pushArchive(
      spec,
      result.workspace!,
    );
    expect(image).toMatch(new RegExp(`^${cluster.registry}/apps/${spec.serviceId}@sha256:`));
    const releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
    expect(await releases.deploy({ spec, image })).toEqual({ outcome: 'DEPLOYED' });
    const service = await kubeConfigOf(cluster)
      .makeApiClient(k8s.CoreV1Api)
      .readNamespacedService({
        name: `app-${spec.serviceId}`,
        namespace: appNamespaceOf(settings, projectId),
      });
    const answer = await waitFor(
      async () => (await fetch(`http://${service.spec?.clusterIP}/`)).text(),
      { timeoutMs: 30_000, what: 'the release to answer at its Service' },
    );
    expect(answer).toBe('built with hello there, serving as uid 1000');
  }, 900_000);

  test('a RUN step that fails fails the build, its output in the log', async () => {
    const { lines, result } = await build('failing.Dockerfile');

    expect(result.state).toBe('failed');
    expect(result.exitCode).not.toBe(0);
    expect(lines).toContain('about to fail');
    expect(lines.join('\n')).toMatch(/error building image/);
  }, 900_000);
});
