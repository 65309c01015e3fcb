import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import {
  findOrStartCluster,
  k8s,
  kubeConfigOf,
  Registry,
  type Cluster,
  type Kubernetes,
} from '@platform/kube';
import { testLogger, waitFor } from '@platform/shared/testing';
import { AppImages } from './app-images';
import { KubernetesAppLogs } from './app-logs';
import { pushBuildContext } from './build-job';
import { KubernetesBuilds } from './builds';
import {
  appNamespaceOf,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';
import { KubernetesReleases } from './releases';
import { KubernetesRoutes } from './routes';
import { removeServiceObjects } from './service-removal';
import { releaseRouted } from './release-routed';
import { fixtureCheckout, testRunnerSettings } from './testing';

/**
 * The deployments service's rights in k8s/ (k8s/base/deployments-runner.yaml, as the production
 * overlay renders them) on a real cluster: applied under names of this test's own and bound to a
 * ServiceAccount of its own, whose token (TokenRequest) is all the runner gets. With it the
 * runner's own classes build (Job, pod log, exec) and cancel, release (namespace, policies,
 * quota, Deployment, Service) and watch the rollout, route (the apps' Services listed and
 * watched), read an app's log and remove a deleted service's objects; what it does not need is
 * refused (403): Secrets elsewhere, nodes, RBAC, exec and Jobs outside the builds' namespace,
 * writes outside its own namespaces.
 */

const REPO_ROOT = path.resolve(__dirname, '../../../../..');
const checker = require(path.join(REPO_ROOT, 'tools/manifest-check/src/checker.ts')) as {
  renderKustomization(dir: string): Promise<{ objects: K8sObject[]; problems: unknown[] }>;
};

/** The ServiceAccount the manifests bind, and the kinds that make its rights. */
const RUNNER_ACCOUNT = 'system:serviceaccount:platform:deployments';
const RIGHTS_KINDS = [
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
];

const FIELD_MANAGER = 'runner-rbac-test';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The HTTP status a call ends with: 200 when it succeeds. */
const statusOf = (call: Promise<unknown>): Promise<number> =>
  call.then(
    () => 200,
    (err: { code?: number }) => {
      if (typeof err?.code === 'number') return err.code;
      throw err;
    },
  );

/**
 * The manifests' rights objects as this test's own: cluster-wide names with `suffix`, the Role in
 * the test's builds namespace, every subject the test's ServiceAccount, and the admission policy
 * naming the test's namespaces and account. Everything else stays as rendered.
 */
function asTestObjects(
  objects: K8sObject[],
  test: { suffix: string; account: { namespace: string; name: string } },
  settings: KubernetesRunnerSettings,
): K8sObject[] {
  const renamed = (name: string) => `${name}-${test.suffix}`;
  const subjects = [{ kind: 'ServiceAccount', ...test.account }];
  return objects.map((object) => {
    const copy = structuredClone(object) as K8sObject & Record<string, any>;
    copy.metadata = { ...copy.metadata, labels: { ...copy.metadata.labels, test: test.suffix } };
    switch (copy.kind) {
      case 'ClusterRole':
        copy.metadata.name = renamed(copy.metadata.name);
        break;
      case 'ClusterRoleBinding':
        copy.metadata.name = renamed(copy.metadata.name);
        copy.roleRef.name = renamed(copy.roleRef.name);
        copy.subjects = subjects;
        break;
      case 'Role':
        copy.metadata.namespace = settings.buildNamespace;
        break;
      case 'RoleBinding':
        copy.metadata.namespace = settings.buildNamespace;
        copy.subjects = subjects;
        break;
      case 'ValidatingAdmissionPolicy': {
        copy.metadata.name = renamed(copy.metadata.name);
        const values: Record<string, string> = {
          buildNamespace: `'${settings.buildNamespace}'`,
          appNamespacePrefix: `'${settings.appNamespacePrefix}-'`,
        };
        for (const variable of copy.spec.variables) {
          variable.expression = values[variable.name] ?? variable.expression;
        }
        const account = `system:serviceaccount:${test.account.namespace}:${test.account.name}`;
        for (const condition of copy.spec.matchConditions) {
          const expression = condition.expression.replace(`'${RUNNER_ACCOUNT}'`, `'${account}'`);
          if (expression === condition.expression) {
            throw new Error(`the admission policy no longer names ${RUNNER_ACCOUNT} as expected`);
          }
          condition.expression = expression;
        }
        break;
      }
      case 'ValidatingAdmissionPolicyBinding':
        copy.metadata.name = renamed(copy.metadata.name);
        copy.spec.policyName = renamed(copy.spec.policyName);
        break;
      default:
        throw new Error(`not a rights object: ${copy.kind}`);
    }
    return copy;
  });
}

/** A KubeConfig for the same API server that authenticates with `token` only. */
function kubeConfigWithToken(admin: Kubernetes.KubeConfig, token: string): Kubernetes.KubeConfig {
  const cluster = admin.getCurrentCluster()!;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'runner', token }],
    contexts: [{ name: 'runner', cluster: cluster.name, user: 'runner' }],
    currentContext: 'runner',
  });
  return kc;
}

describe('the deployments service’s rights in k8s/, on a real cluster', () => {
  const suffix = hex(3);
  const account = { namespace: `rbac-${suffix}`, name: 'deployments' };
  const projectId = hex(12);
  let cluster: Cluster;
  let admin: Kubernetes.KubeConfig;
  let runner: Kubernetes.KubeConfig;
  let settings: KubernetesRunnerSettings;
  let applied: K8sObject[] = [];
  let checkout: string;
  /** Made by the admin in kube-system, for the runner to be refused. */
  const secretName = `rbac-test-${suffix}`;
  const secretValue = `value-${hex(8)}`;

  const spec = (buildCommand: string): DeploymentSpec => ({
    deploymentId: hex(12),
    serviceId: hex(12),
    projectId,
    accountId: hex(12),
    commitHash: 'd'.repeat(40),
    repository: 'https://example.invalid/repo.git',
    branch: 'main',
    rootDirectory: '',
    buildCommand,
    startCommand: 'node dist/server.js',
    healthCheckPath: '/',
    variables: { GREETING: 'hello' },
  });
  let released: DeploymentSpec;
  let releasedImage: string;

  /** Server-side apply as `kc`'s user, the way the runner applies. */
  const applyAs = (kc: Kubernetes.KubeConfig, object: K8sObject) =>
    new KubernetesReleases(kc, settings).apply([object]);
  const adminApply = async (objects: K8sObject[]) => {
    for (const object of objects) await applyAs(admin, object);
  };

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    admin = kubeConfigOf(cluster);
    // A build whose workspace cannot be collected waits for its deadline, a release that cannot
    // start for its progress deadline: short ones, so that a right taken away fails in minutes.
    settings = testRunnerSettings(cluster, { app: { healthCheckTimeoutSeconds: 90 } });
    settings.build = { ...settings.build, timeoutSeconds: 120 };

    const { objects, problems } = await checker.renderKustomization('k8s/overlays/production');
    expect(problems).toEqual([]);
    const rights = objects.filter((o) => RIGHTS_KINDS.includes(o.kind));
    expect(rights.map((o) => o.kind).sort()).toEqual([...RIGHTS_KINDS].sort());
    const builds = objects.find(
      (o) =>
        o.kind === 'Namespace' &&
        o.metadata.name === rights.find((r) => r.kind === 'Role')!.metadata.namespace,
    )!;
    const core = admin.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: account.namespace } } });
    await core.createNamespacedServiceAccount({
      namespace: account.namespace,
      body: { metadata: { name: account.name } },
    });
    // The builds' namespace as the manifests make it, under the test's name.
    await adminApply([
      { ...builds, metadata: { ...builds.metadata, name: settings.buildNamespace } },
    ]);
    applied = asTestObjects(rights, { suffix, account }, settings);
    await adminApply(applied);
    await core.createNamespacedSecret({
      namespace: 'kube-system',
      body: { metadata: { name: secretName }, stringData: { password: secretValue } },
    });

    const { status } = await core.createNamespacedServiceAccountToken({
      name: account.name,
      namespace: account.namespace,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    runner = kubeConfigWithToken(admin, status!.token);

    // The admission policy holds once the API server has loaded it: until then the runner's
    // rights let a Secret be written into the account's own namespace (not one of the runner's).
    const probe = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'admission-probe', namespace: account.namespace },
    };
    const refusedByPolicy = () =>
      applyAs(runner, probe).then(
        () => false,
        (err: { code?: number; body?: unknown }) =>
          err.code === 403 && String(err.body).includes('ValidatingAdmissionPolicy'),
      );
    await waitFor(refusedByPolicy, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the admission policy to refuse writes outside the runner’s namespaces',
    });

    checkout = fixtureCheckout(
      `const fs = require('node:fs');
fs.mkdirSync('dist');
fs.writeFileSync('dist/server.js', "console.log('listening'); require('node:http').createServer((q, r) => r.end('ok')).listen(process.env.PORT);");`,
    );
  }, 50 * 60_000);

  afterAll(async () => {
    if (checkout) rmSync(checkout, { recursive: true, force: true });
    if (!admin) return;
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const api = k8s.KubernetesObjectApi.makeApiClient(admin);
    await core
      .deleteNamespacedSecret({ name: secretName, namespace: 'kube-system' })
      .catch(() => undefined);
    for (const object of applied.filter((o) => !o.metadata.namespace)) {
      await api.delete(object).catch(() => undefined);
    }
    await admin
      .makeApiClient(k8s.RbacAuthorizationV1Api)
      .deleteClusterRoleBinding({ name: `rbac-test-escalation-${suffix}` })
      .catch(() => undefined);
    const namespaces = [
      account.namespace,
      settings.buildNamespace,
      appNamespaceOf(settings, projectId),
    ];
    for (const name of namespaces) await core.deleteNamespace({ name }).catch(() => undefined);
  });

  test('a build runs, streams its output, hands over its workspace, and is cancelled', async () => {
    const registry = new Registry(cluster.registry);
    const builds = new KubernetesBuilds(runner, settings);

    released = spec('echo "build says $GREETING"; npm run build --silent');
    await builds.start(released, await pushBuildContext(registry, settings, released, checkout));
    let output = '';
    const built = await builds.follow(released, (text) => (output += text));
    expect([built.state, built.exitCode, output]).toEqual(['succeeded', 0, 'build says hello\n']);
    expect(built.workspace?.length).toBeGreaterThan(0);
    releasedImage = await new AppImages(registry, settings).push(released, built.workspace!);

    const slow = spec('echo started; sleep 600');
    await builds.start(slow, await pushBuildContext(registry, settings, slow, checkout));
    let started!: () => void;
    const sawStart = new Promise<void>((resolve) => (started = resolve));
    const following = builds.follow(slow, (text) => text.includes('started\n') && started());
    await sawStart;
    await builds.cancel(slow);
    expect(await following).toEqual({ state: 'cancelled' });
  }, 600_000);

  test('a release is applied in the project’s new namespace and its rollout watched', async () => {
    const releases = new KubernetesReleases(runner, settings);
    expect(await releases.deploy({ spec: released, image: releasedImage })).toEqual({
      outcome: 'DEPLOYED',
    });
  }, 600_000);

  test('the router finds the app’s Service, the app’s log is read, every Service watched', async () => {
    expect(await releaseRouted(runner, settings, released, new AbortController().signal)).toBe(
      true,
    );
    const routes = new KubernetesRoutes(runner, settings, testLogger('routes'));
    await routes.start();
    try {
      expect(routes.liveRelease(released.serviceId)).toBeDefined();
    } finally {
      await routes.stop();
    }

    const logs = new KubernetesAppLogs(runner, settings);
    expect(await logs.list()).toContainEqual({ releaseId: released.deploymentId, state: 'live' });
    const { text } = await waitFor(
      async () => {
        const read = await logs.readLog(released.deploymentId);
        return read.text ? read : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the app’s first line' },
    );
    expect(text).toBe('listening\n');

    // KubernetesRoutes lists again when its watch fails: the watch itself (of EndpointSlices).
    const namespace = appNamespaceOf(settings, projectId);
    const watched = await untilAborted<string>((found, failed) =>
      new k8s.Watch(runner).watch(
        '/apis/discovery.k8s.io/v1/endpointslices',
        {},
        (phase: string, slice: Kubernetes.V1EndpointSlice) => {
          if (slice.metadata?.namespace === namespace) {
            found(`${phase} ${slice.metadata.labels?.['kubernetes.io/service-name']}`);
          }
        },
        (err: unknown) => err && failed(err),
      ),
    );
    expect(watched).toBe(`ADDED app-${released.serviceId}`);
  }, 120_000);

  test('everything else is refused', async () => {
    const core = runner.makeApiClient(k8s.CoreV1Api);
    const apply = (object: K8sObject) => applyAs(runner, object);
    const appNamespace = appNamespaceOf(settings, projectId);
    const [node] = (await admin.makeApiClient(k8s.CoreV1Api).listNode()).items;
    const [appPod] = (
      await admin.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: appNamespace })
    ).items;

    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace: 'kube-system' },
    };
    // What an apply answers with: the object as stored, data and all, had it gone through.
    let answer = '';
    const applySecret = k8s.KubernetesObjectApi.makeApiClient(runner)
      .patch(secret, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply)
      .then(
        (stored) => {
          answer = JSON.stringify(stored);
        },
        (err: unknown) => {
          answer = JSON.stringify(err);
          throw err;
        },
      );
    const refusals: Record<string, Promise<number>> = {
      'read a Secret in kube-system': statusOf(
        core.readNamespacedSecret({ name: secretName, namespace: 'kube-system' }),
      ),
      'apply a Secret in kube-system (the answer would carry it)': statusOf(applySecret),
      'list Secrets anywhere': statusOf(core.listSecretForAllNamespaces()),
      'delete a node': statusOf(core.deleteNode({ name: node!.metadata!.name! })),
      'bind itself to cluster-admin': statusOf(
        runner.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRoleBinding({
          body: {
            metadata: { name: `rbac-test-escalation-${suffix}` },
            roleRef: {
              apiGroup: 'rbac.authorization.k8s.io',
              kind: 'ClusterRole',
              name: 'cluster-admin',
            },
            subjects: [{ kind: 'ServiceAccount', ...account }],
          },
        }),
      ),
      'exec into an app’s pod': execStatus(runner, appNamespace, appPod!.metadata!.name!, 'app'),
      'create a Job outside the builds’ namespace': statusOf(
        runner.makeApiClient(k8s.BatchV1Api).createNamespacedJob({
          namespace: appNamespace,
          body: {
            metadata: { name: 'not-a-build' },
            spec: {
              template: {
                spec: {
                  restartPolicy: 'Never',
                  containers: [{ name: 'c', image: cluster.nodeImage }],
                },
              },
            },
          },
        }),
      ),
      'label kube-system': statusOf(
        apply({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'kube-system', labels: { [`rbac-test-${suffix}`]: 'x' } },
        }),
      ),
      'apply a Deployment in the platform’s own namespace': statusOf(
        apply({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'not-an-app', namespace: account.namespace },
          spec: {
            selector: { matchLabels: { app: 'x' } },
            template: {
              metadata: { labels: { app: 'x' } },
              spec: { containers: [{ name: 'c', image: cluster.nodeImage }] },
            },
          },
        }),
      ),
    };
    const statuses: Record<string, number> = {};
    for (const [what, status] of Object.entries(refusals)) statuses[what] = await status;
    expect(statuses).toEqual(Object.fromEntries(Object.keys(refusals).map((what) => [what, 403])));
    expect(answer).not.toContain(Buffer.from(secretValue).toString('base64'));
    expect(answer).not.toContain(secretValue);
  }, 120_000);

  test('a deleted service’s Deployment, Service, Ingress and Secrets are removed', async () => {
    await removeServiceObjects(runner, released.serviceId);
    const namespace = appNamespaceOf(settings, projectId);
    const left = await Promise.all([
      admin.makeApiClient(k8s.AppsV1Api).listNamespacedDeployment({ namespace }),
      admin.makeApiClient(k8s.CoreV1Api).listNamespacedService({ namespace }),
      admin.makeApiClient(k8s.NetworkingV1Api).listNamespacedIngress({ namespace }),
      admin.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace }),
    ]);
    expect(left.map((list) => list.items.map((item) => item.metadata?.name))).toEqual([
      [],
      [],
      [],
      [],
    ]);
  }, 120_000);
});

/**
 * What a streaming call (a watch, a followed log) hands to `found` first; the stream is aborted
 * then, or when it fails, or after 30 s.
 */
function untilAborted<T>(
  start: (found: (value: T) => void, failed: (err: unknown) => void) => Promise<AbortController>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let controller: AbortController | undefined;
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      controller?.abort();
      finish();
    };
    const timer = setTimeout(
      () => settle(() => reject(new Error('nothing came within 30 s'))),
      30_000,
    );
    start(
      (value) => settle(() => resolve(value)),
      (err) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
    ).then(
      (made) => {
        controller = made;
        if (settled) made.abort();
      },
      (err: unknown) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
    );
  });
}

/** The HTTP status of an exec's upgrade: 403 when refused, 200 when the command ran. */
function execStatus(kc: Kubernetes.KubeConfig, namespace: string, pod: string, container: string) {
  const sink = () =>
    new Writable({
      write(_chunk, _encoding, done) {
        done();
      },
    });
  return new Promise<number>((resolve, reject) => {
    new k8s.Exec(kc)
      .exec(namespace, pod, container, ['true'], sink(), sink(), null, false, (status) =>
        resolve(status.status === 'Success' ? 200 : 500),
      )
      .catch((err: unknown) => {
        const match = /\b(40\d)\b/.exec(String((err as Error)?.message ?? err));
        if (match) resolve(Number(match[1]));
        else reject(err instanceof Error ? err : new Error(String(err)));
      });
  });
}
