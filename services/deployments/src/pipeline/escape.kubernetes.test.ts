import path from 'node:path';
import { k8s, kubeConfigOf } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { startTestHosts, type TestHosts } from '../test/test-hosts';
import {
  answerOf,
  connectedIn,
  everyWayIn,
  expectHostFilesHidden,
  expectNoWayIn,
  hostConnects,
  probeVariables,
  withProbe,
} from '../test/escape-probes';
import { useKubernetesHarness } from '../test/kubernetes-harness';
import type { OwnedService } from '../test/projects-stub';

/**
 * The escape suite (escape.test.ts, issue 21) on the Kubernetes runner (issue 22): the same
 * probes, run by a real build Job and a real app pod through the pipeline with RUNTIME=kubernetes
 * on the local cluster, plus the cluster's own ways in: the apiserver (its Service, the node's
 * address, 127.0.0.1), the kubelet, and CoreDNS beyond DNS itself. What holds them there is the
 * node's nftables table (scripts/infra/kube/run.sh) until a network plugin enforces the
 * namespaces' NetworkPolicies (docs/kubernetes-runner.md).
 */

/** A build Job, an image pull and a rollout: tens of seconds, more on a loaded machine. */
const ROLLOUT = 240_000;
const TEST = 600_000;

const k = useKubernetesHarness();
const { h } = k;
let hosts: TestHosts;
/** The node's address (where the kubelet and CoreDNS listen) and the apiserver's Service. */
let node: string;
let apiService: string;

beforeAll(async () => {
  hosts = await startTestHosts();
  const kc = kubeConfigOf(k.cluster());
  const nodes = await kc.makeApiClient(k8s.CoreV1Api).listNode();
  node = nodes.items[0]!.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
  const kubernetes = await k
    .core()
    .readNamespacedService({ name: 'kubernetes', namespace: 'default' });
  apiService = `${kubernetes.spec!.clusterIP!}:443`;
});
afterAll(() => hosts?.close());

/** CoreDNS answers pods on the node's address, port 53 here: the one way in a pod must have. */
const dnsItself = () => `${node}:53`;

/** Every way in of the local suite, and the cluster's own, but DNS itself. */
function clusterWaysIn(): string[] {
  const cluster = [`${node}:10250`, `${node}:6443`, '127.0.0.1:6443', apiService];
  return [...new Set([...everyWayIn(hosts), ...cluster])].filter((t) => t !== dnsItself());
}

/** Files of the host a build or an app could be after: the platform's and the cluster's. */
function hostFiles(): string[] {
  const clusterDir = path.dirname(k.cluster().kubeconfigPath);
  return [
    h.config.BUILDS_DIR,
    path.join(clusterDir, 'pki'),
    path.join(clusterDir, 'kubelet'),
    '/run/platform-kube',
    '/root/.cache',
    '/work',
  ];
}

/** Deploys the fixture app in a project of its own: what another tenant has running. */
async function anotherTenantsApp(): Promise<{ service: OwnedService; pod: string; svc: string }> {
  const { service, id } = await h.newDeployment();
  await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
  const [pod] = await k.podsOf(service, id);
  return { service, pod: `${pod!.status!.podIP!}:8080`, svc: await k.serviceAddressOf(service) };
}

/**
 * The host's own GET of a pod or Service address answers: the control that it serves (kube-proxy
 * programs a new Service moments after its pod is ready).
 */
async function hostGets(target: string): Promise<void> {
  await waitFor(
    async () => (await fetch(`http://${target}/healthz`).catch(() => null))?.status === 200,
    { timeoutMs: 60_000, what: `the host's GET of ${target}` },
  );
}

describe('escaping a build Job and an app pod', () => {
  it('the host reaches every test host, and the kubelet and CoreDNS listen on the node', async () => {
    for (const address of hosts.addresses) {
      expect(await answerOf(address, hosts.port)).toBe(`target ${address}`);
    }
    for (const target of [`${node}:10250`, dnsItself(), '127.0.0.1:6443']) {
      expect([target, await hostConnects(target)]).toEqual([target, 'CONNECTED']);
    }
  });

  it(
    'a build reaches no port of this machine (apiserver and kubelet included) at any of its addresses, nor the apiserver’s Service, nor a private, shared, link-local or metadata address; DNS works; it reads none of the host’s files',
    async () => {
      const targets = clusterWaysIn();
      const files = hostFiles();
      const commit = await withProbe(h.appRepository);
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node probe.js && node build.js',
          variables: probeVariables({ targets: [...targets, dnsItself()], files }),
        },
      );

      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);

      // DNS is the one way in it has: the probes do reach the node.
      expectNoWayIn(logs, targets, [dnsItself()]);
      expectHostFilesHidden(logs, files);
    },
    TEST,
  );

  it(
    'an app reaches none of them either, and reads none of the host’s files',
    async () => {
      const targets = clusterWaysIn();
      const files = hostFiles();
      const commit = await withProbe(h.appRepository);
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          startCommand: 'node probe.js && node server.js',
          variables: probeVariables({ targets: [...targets, dnsItself()], files }),
        },
      );

      await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
      const logs = await k.appLogOnce(service, id, 'probes done', ROLLOUT);

      expectNoWayIn(logs, targets, [dnsItself()]);
      expectHostFilesHidden(logs, files);
    },
    TEST,
  );

  it(
    'neither a build nor an app reaches another project’s app, by its pod or its Service, nor takes its address',
    async () => {
      const other = await anotherTenantsApp();
      // The host reaches both: a refusal below is the boundary's.
      await hostGets(other.pod);
      await hostGets(other.svc);
      const targets = [other.pod, other.svc];
      const bind = other.pod.split(':')[0]!;
      const commit = await withProbe(h.appRepository);
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node probe.js && node build.js',
          startCommand: 'node probe.js && node server.js',
          variables: probeVariables({ targets, bind }),
        },
      );

      const { logs: buildLogs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
      const appLogs = await k.appLogOnce(service, id, 'probes done', ROLLOUT);

      expect({ build: connectedIn(buildLogs), app: connectedIn(appLogs) }).toEqual({
        build: [],
        app: [],
      });
      expectNoWayIn(buildLogs, targets);
      expectNoWayIn(appLogs, targets);
      expect(appLogs).toContain(`bind ${bind} EADDRNOTAVAIL`);
      await hostGets(other.svc);
    },
    TEST,
  );
});
