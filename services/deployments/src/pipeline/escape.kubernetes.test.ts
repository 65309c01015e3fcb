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
import { literalCommand } from '../runtime/kubernetes/build-job';
import { buildContainerCommand } from '../runtime/kubernetes/build-output';
import { RESTRICTED_CONTAINER } from '../runtime/kubernetes/objects';

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

describe('a variable is a value, never a part of the pod', () => {
  /** Values that would change a command, a YAML document or an env file were they pasted in. */
  const INJECTIONS = {
    INJECT_NEWLINES: 'first\nsecurityContext: {privileged: true}\n---\nkind: Pod\n',
    INJECT_SUBSTITUTION: '$(touch /tmp/pwned)`touch /tmp/pwned`${HOME}$$ $(PLATFORM_SERVICE_ID)',
    INJECT_QUOTES: `it's "quoted" \\'; touch /tmp/pwned; echo '`,
    INJECT_DASHES: '--privileged=true -e LD_PRELOAD=/tmp/x.so',
  };
  /** Prints the variables as the process sees them, and whether anything ran that should not. */
  const SHOW = `console.log('variables ' + JSON.stringify(Object.fromEntries(${JSON.stringify(
    Object.keys(INJECTIONS),
  )}.map((name) => [name, process.env[name]])))); console.log('pwned ' + require('fs').existsSync('/tmp/pwned'));`;
  /**
   * `$(NAME)` and `$$` are the shell's in a build command, as in the local runtime: Kubernetes
   * must not expand them in the container's command first (with a variable's value in it).
   */
  const BUILD =
    'echo "pid $$"; echo "substituted [$(INJECT_SUBSTITUTION)]"; node show.js && node build.js';
  const expected = `variables ${JSON.stringify(INJECTIONS)}`;

  it(
    'arrives in the build and the app as written, and the pods are made as for any other deployment',
    async () => {
      const commit = await h.appRepository.commit({ files: { 'show.js': SHOW } });
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: BUILD,
          startCommand: 'node show.js && node server.js',
          variables: Object.entries(INJECTIONS).map(([name, value]) => ({ name, value })),
        },
      );

      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
      const appLogs = await k.appLogOnce(service, id, 'pwned ', ROLLOUT);

      expect(logs).toContain(`\n${expected}\n`);
      expect(logs).toContain('\npwned false\n');
      expect(logs).toMatch(/^pid \d+$/m);
      expect(logs).toMatch(/^substituted \[\]$/m);
      expect(appLogs).toContain(`${expected}\n`);
      expect(appLogs).toContain('pwned false\n');

      const build = (await k.buildPodOf(id))!.spec!;
      expect(build.containers).toHaveLength(1);
      expect(build.automountServiceAccountToken).toBe(false);
      expect(build.securityContext).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const builder = build.containers[0]!;
      expect(builder.securityContext).toEqual(RESTRICTED_CONTAINER);
      expect(builder.command).toEqual(literalCommand(buildContainerCommand(BUILD)));
      expect(builder.args).toBeUndefined();
      expect(builder.env?.map((e) => e.name).sort()).toEqual([
        'HOME',
        'PLATFORM_COMMIT_HASH',
        'PLATFORM_DEPLOYMENT_ID',
        'PLATFORM_PROJECT_ID',
        'PLATFORM_SERVICE_ID',
      ]);
      expect(builder.envFrom).toEqual([{ secretRef: { name: `build-${id}` } }]);

      const [pod] = await k.podsOf(service, id);
      const app = pod!.spec!;
      expect(app.containers).toHaveLength(1);
      expect(app.automountServiceAccountToken).toBe(false);
      expect(app.securityContext).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const runner = app.containers[0]!;
      expect(runner.securityContext).toEqual(RESTRICTED_CONTAINER);
      expect(runner.command).toBeUndefined();
      expect(runner.args).toBeUndefined();
      expect(runner.env?.map((e) => e.name).sort()).toEqual([
        'PLATFORM_COMMIT_HASH',
        'PLATFORM_DEPLOYMENT_ID',
        'PLATFORM_PROJECT_ID',
        'PLATFORM_SERVICE_ID',
        'PORT',
      ]);
      expect(runner.envFrom).toEqual([{ secretRef: { name: `env-${id}` } }]);
    },
    TEST,
  );
});
