import path from 'node:path';
import { k8s, kubeConfigOf } from '@platform/kube';
import { startTestHosts, type TestHosts } from '../test/test-hosts';
import {
  buildStepOf,
  everyWayIn,
  expectHostFilesHidden,
  expectNoWayIn,
  PROBE,
  probeVariables,
} from '../test/escape-probes';
import { useKubernetesHarness } from '../test/kubernetes-harness';

/**
 * A service's own Dockerfile through the real pipeline with RUNTIME=kubernetes on the local
 * cluster (docs/kubernetes-runner.md, "A repository's own Dockerfile"): the fixture repository
 * with a Dockerfile whose RUN step builds the app is built by kaniko in a Job and answers at the
 * service's URL; a RUN step that fails ends the deployment FAILED with its output; a FROM the
 * platform cannot hand in is FAILED before any Job; and from a RUN step (uid 0 of the pod's own
 * user namespace) nothing of the node, the host (where the platform runs here) or the apiserver
 * connects, and none of the host's files is there (the probes of escape.kubernetes.test.ts).
 * Needs runc >= 1.2 on the node (scripts/infra/kube since this test).
 */

const ROLLOUT = 300_000;
const TEST = 600_000;

const DOCKERFILE = `FROM platform/node:22.23.3
ARG PLATFORM_COMMIT_HASH
ARG PROBE_TARGETS
ARG PROBE_FILES
USER root
WORKDIR /srv/app
COPY . .
RUN echo "RUN as uid $(id -u)" && node probe.js && node build.js && chown -R node /srv/app
USER node
ENTRYPOINT ["node", "server.js"]
`;

const k = useKubernetesHarness();
const { h } = k;
let hosts: TestHosts;
let node: string;
let apiService: string;

beforeAll(async () => {
  hosts = await startTestHosts();
  const nodes = await kubeConfigOf(k.cluster()).makeApiClient(k8s.CoreV1Api).listNode();
  node = nodes.items[0]!.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
  const kubernetes = await k
    .core()
    .readNamespacedService({ name: 'kubernetes', namespace: 'default' });
  apiService = `${kubernetes.spec!.clusterIP!}:443`;
});
afterAll(() => hosts?.close());

describe('a Dockerfile on Kubernetes', () => {
  it(
    'is built by kaniko, RUN step and all, and its image answers at the service’s URL; from the RUN step nothing of the node, the host or the apiserver connects, and the host’s files are not there',
    async () => {
      const dns = `${node}:53`;
      const targets = [
        ...new Set([
          ...everyWayIn(hosts),
          `${node}:10250`,
          `${node}:6443`,
          '127.0.0.1:6443',
          apiService,
        ]),
      ].filter((t) => t !== dns);
      const clusterDir = path.dirname(k.cluster().kubeconfigPath);
      const files = [h.config.BUILDS_DIR, path.join(clusterDir, 'pki'), '/root/.cache', '/work'];
      const commit = await h.appRepository.commit({
        greeting: 'from a Dockerfile',
        files: { Dockerfile: DOCKERFILE, 'probe.js': PROBE },
      });

      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          dockerfilePath: 'Dockerfile',
          variables: probeVariables({ targets: [...targets, dns], files }),
        },
      );
      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);

      expect(JSON.parse((await h.app(service)).body)).toMatchObject({
        commit: commit.revision,
        greeting: 'from a Dockerfile',
      });
      expect(logs).toContain('==> building the Dockerfile Dockerfile with kaniko in a Job');
      expect(logs).toContain('RUN as uid 0');
      expect(logs).toContain(`built revision ${commit.revision}`);
      expectNoWayIn(buildStepOf(logs), targets, [dns]);
      expectHostFilesHidden(buildStepOf(logs), files);
    },
    TEST,
  );

  it(
    'whose RUN step fails is FAILED, with the step’s output',
    async () => {
      const commit = await h.appRepository.commit({
        files: {
          Dockerfile: 'FROM platform/node:22.23.3\nRUN echo "about to fail" && exit 3\n',
        },
      });

      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        { dockerfilePath: 'Dockerfile' },
      );
      const { logs } = await h.waitForStatus(service, id, 'FAILED', ROLLOUT);

      expect(logs).toContain('about to fail');
      expect(logs).toMatch(/The Dockerfile's build failed with exit code \d+\./);
    },
    TEST,
  );

  it(
    'whose FROM is not a base image of the platform is FAILED, saying why, with no Job',
    async () => {
      const commit = await h.appRepository.commit({
        files: { 'docker/web.Dockerfile': 'FROM node:22\nRUN true\n' },
      });

      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        { dockerfilePath: 'docker/web.Dockerfile' },
      );
      const { logs } = await h.waitForStatus(service, id, 'FAILED', ROLLOUT);

      expect(logs).toContain(
        "The Dockerfile cannot be built: line 1: FROM node:22: only the platform's base images (platform/…, e.g. platform/node:22.23.3) can be built from here.",
      );
      const jobs = await kubeConfigOf(k.cluster())
        .makeApiClient(k8s.BatchV1Api)
        .listNamespacedJob({ namespace: k.buildNamespace })
        .catch(() => ({ items: [] }));
      expect(jobs.items.map((job) => job.metadata?.name)).not.toContain(`build-${id}`);
    },
    TEST,
  );
});
