import path from 'node:path';
import { k8s, kubeConfigOf, type Kubernetes } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { startTestHosts, type TestHosts } from '../test/test-hosts';
import {
  answerOf,
  buildStepOf,
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

/**
 * Deploys probe.js as the build command or the app's start command (or both), told what to try;
 * what each printed (the build's log, the app pod's).
 */
async function probedFrom(
  sides: { build?: boolean; app?: boolean },
  what: Parameters<typeof probeVariables>[0],
): Promise<{ build: string; app: string }> {
  const commit = await withProbe(h.appRepository);
  const probe = 'node probe.js';
  const { service, id } = await h.newDeployment(
    { commitHash: commit.hash },
    {
      ...(sides.build && { buildCommand: `${probe} && node build.js` }),
      ...(sides.app && { startCommand: `${probe} && node server.js` }),
      variables: probeVariables(what),
    },
  );
  const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
  return {
    build: buildStepOf(logs),
    app: sides.app ? await k.appLogOnce(service, id, 'probes done', ROLLOUT) : '',
  };
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

  it.each([
    ['a build', 'build'],
    ['an app', 'app'],
  ] as const)(
    '%s reaches no port of this machine (apiserver and kubelet included) at any of its addresses, nor the apiserver’s Service, nor a private, shared, link-local or metadata address; DNS works; it reads none of the host’s files',
    async (_, side) => {
      const targets = clusterWaysIn();
      const files = hostFiles();

      const printed = await probedFrom(
        { [side]: true },
        { targets: [...targets, dnsItself()], files },
      );

      // DNS is the one way in it has: the probes do reach the node.
      expectNoWayIn(printed[side], targets, [dnsItself()]);
      expectHostFilesHidden(printed[side], files);
    },
    TEST,
  );

  /**
   * From its first moment: the probes start as the build and the app start. (A pod was unfenced
   * until kube-router's next sync, ~300 ms, while the other project's ingress rule had lost its
   * `from` on the way to the cluster and admitted every source: network-policies.test.ts.)
   */
  it(
    'neither a build nor an app reaches another project’s app, by its pod or its Service, from its first moment, nor takes its address',
    async () => {
      const other = await anotherTenantsApp();
      // The host reaches both: a refusal below is the boundary's.
      await hostGets(other.pod);
      await hostGets(other.svc);
      const targets = [other.pod, other.svc];
      const bind = other.pod.split(':')[0]!;

      const { build, app } = await probedFrom({ build: true, app: true }, { targets, bind });

      expect({ build: connectedIn(build), app: connectedIn(app) }).toEqual({ build: [], app: [] });
      expectNoWayIn(build, targets);
      expectNoWayIn(app, targets);
      expect(app).toContain(`bind ${bind} EADDRNOTAVAIL`);
      // The other app still serves its own visitors, through the router.
      expect((await h.app(other.service)).status).toBe(200);
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
  const POD_SECURITY = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
  const PLATFORM_ENV = [
    'PLATFORM_COMMIT_HASH',
    'PLATFORM_DEPLOYMENT_ID',
    'PLATFORM_PROJECT_ID',
    'PLATFORM_SERVICE_ID',
  ];
  /** What of a pod a variable could change: its security, its command, its environment. */
  const madeOf = (pod: Kubernetes.V1PodSpec) => {
    const [container] = pod.containers;
    return {
      containers: pod.containers.length,
      serviceAccountToken: pod.automountServiceAccountToken,
      podSecurity: pod.securityContext,
      security: container!.securityContext,
      command: container!.command ?? container!.args,
      env: container!.env?.map((e) => e.name).sort(),
      envFrom: container!.envFrom,
    };
  };

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

      const logs = buildStepOf((await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT)).logs);
      const appLogs = await k.appLogOnce(service, id, 'pwned ', ROLLOUT);

      expect(logs).toContain(`\n${expected}\n`);
      expect(logs).toContain('\npwned false\n');
      expect(logs).toMatch(/^pid \d+$/m);
      expect(logs).toMatch(/^substituted \[\]$/m);
      expect(appLogs).toContain(`${expected}\n`);
      expect(appLogs).toContain('pwned false\n');

      const [pod] = await k.podsOf(service, id);
      expect(madeOf((await k.buildPodOf(id))!.spec!)).toEqual({
        containers: 1,
        serviceAccountToken: false,
        podSecurity: POD_SECURITY,
        security: RESTRICTED_CONTAINER,
        command: literalCommand(buildContainerCommand(BUILD)),
        env: ['HOME', ...PLATFORM_ENV],
        envFrom: [{ secretRef: { name: `build-${id}` } }],
      });
      expect(madeOf(pod!.spec!)).toEqual({
        containers: 1,
        serviceAccountToken: false,
        podSecurity: POD_SECURITY,
        security: RESTRICTED_CONTAINER,
        // The image’s entrypoint: `sh -c -- <startCommand>`.
        command: undefined,
        env: [...PLATFORM_ENV, 'PORT'],
        envFrom: [{ secretRef: { name: `env-${id}` } }],
      });
    },
    TEST,
  );
});
