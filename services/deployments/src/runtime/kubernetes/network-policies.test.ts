import { randomBytes } from 'node:crypto';
import {
  findOrStartCluster,
  k8s,
  kubeConfigOf,
  type Cluster,
  type Kubernetes,
} from '@platform/kube';
import {
  namespaceHandle,
  nodePod,
  testNamespace,
  type TestNamespace,
} from '@platform/kube/testing';
import { waitFor } from '@platform/shared/testing';
import { APP_PORT, appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import { KubernetesReleases } from './releases';
import { projectNamespaceObjects } from './tenancy';
import { testRunnerSettings } from './testing';

/**
 * The runner's NetworkPolicies (tenancy.ts) as the local cluster enforces them (kube-router's
 * firewall, scripts/infra/kube/run.sh): two projects' namespaces made by the runner's own objects,
 * a namespace standing for the platform's, and one for the router. A project's pod reaches no pod
 * or Service of another project and no pod of the platform's; the router reaches the app by pod
 * and by Service; the host (the platform's own processes, the tests) reaches them all.
 */

/**
 * Every pod runs this: `/ready`, its name on any other path, and on `/probe?targets=<JSON>`
 * (name → URL, or `dns:<name>`) a GET of each URL (or a lookup of the name) made now, from inside
 * the pod: the body (the address), or the error's code.
 */
const POD = `
const http = require('node:http');
const dns = require('node:dns').promises;
const tryGet = (url) => new Promise((resolve) => {
  const req = http.get(url, { agent: false, timeout: 3000 }, (res) => {
    let body = '';
    res.setEncoding('utf8').on('data', (c) => (body += c)).on('end', () => resolve(body));
  });
  req.once('timeout', () => { req.destroy(); resolve('timeout'); });
  req.once('error', (err) => resolve(err.code ?? String(err)));
});
// dns:NAME resolves NAME through the cluster DNS; anything else is a URL.
const reach = (target) => target.startsWith('dns:')
  ? dns.lookup(target.slice(4)).then((a) => a.address, (err) => err.code)
  : tryGet(target);
http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://pod');
  if (url.pathname === '/ready') return res.end('ok');
  if (url.pathname !== '/probe') return res.end(process.argv[1]);
  const targets = JSON.parse(url.searchParams.get('targets'));
  const results = await Promise.all(Object.entries(targets).map(async ([k, u]) => [k, await reach(u)]));
  res.end(JSON.stringify(Object.fromEntries(results)));
}).listen(${APP_PORT});
`;

const id = () => randomBytes(12).toString('hex');
const BLOCKED = /^(ECONNREFUSED|EHOSTUNREACH|timeout)$/;

describe('the runner’s NetworkPolicies on the local cluster', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let router: TestNamespace;
  let platform: TestNamespace;
  let projectA: TestNamespace;
  let projectB: TestNamespace;
  const pods: Record<string, Kubernetes.V1Pod> = {};
  let webService: string;
  const projectIdA = id();
  /** Namespaces a test made, removed with the others. */
  const extra: TestNamespace[] = [];

  const run = async (ns: TestNamespace, name: string) => {
    pods[name] = await ns.runPod(
      await nodePod(cluster, {
        name,
        labels: { app: name },
        args: ['-e', POD, name],
        readyPath: '/ready',
      }),
    );
  };
  const podUrl = (name: string) => `http://${pods[name]?.status?.podIP}:${APP_PORT}/`;

  /** What the pod `from` gets from each of `targets` (name → URL), asked from the host. */
  const probe = async (from: string, targets: Record<string, string>) => {
    const query = new URLSearchParams({ targets: JSON.stringify(targets) });
    const res = await fetch(`${podUrl(from)}probe?${query}`);
    return (await res.json()) as Record<string, string>;
  };

  /**
   * Polls until the pod `from` gets what `expected` says from each target: the firewall programs a
   * pod's rules moments after the pod has its address, as kube-proxy does its Services.
   */
  const expectReach = (from: string, targets: Record<string, string>, expected: object) =>
    waitFor(
      async () => {
        const results = await probe(from, targets);
        expect(results).toEqual(expected);
        return results;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: `what ${from} reaches` },
    );

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    router = await testNamespace(cluster, 'np-router');
    platform = await testNamespace(cluster, 'np-platform');
    settings = { ...testRunnerSettings(cluster), ingressControllerNamespace: router.name };
    const releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
    const [a, b] = [projectIdA, id()];
    await releases.apply([
      ...projectNamespaceObjects(settings, a),
      ...projectNamespaceObjects(settings, b),
    ]);
    projectA = namespaceHandle(cluster, appNamespaceOf(settings, a));
    projectB = namespaceHandle(cluster, appNamespaceOf(settings, b));
    await waitFor(
      () =>
        projectB.core.readNamespacedServiceAccount({ name: 'default', namespace: projectB.name }),
      { timeoutMs: 60_000, what: 'the project namespaces’ ServiceAccounts' },
    );
    await waitFor(
      () =>
        projectA.core.readNamespacedServiceAccount({ name: 'default', namespace: projectA.name }),
      { timeoutMs: 60_000, what: 'the project namespaces’ ServiceAccounts' },
    );
    const service = await projectB.core.createNamespacedService({
      namespace: projectB.name,
      body: {
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: APP_PORT }] },
      },
    });
    webService = `http://${service.spec?.clusterIP}/`;
    await Promise.all([
      run(projectB, 'web'),
      run(projectA, 'tenant'),
      run(platform, 'api'),
      run(router, 'router'),
    ]);
    // kube-proxy programs the Service moments after its pod is ready.
    await waitFor(async () => (await fetch(webService)).ok, {
      timeoutMs: 30_000,
      what: 'the Service to answer the host',
    });
  }, 10 * 60_000);

  afterAll(async () => {
    await Promise.all(
      [router, platform, projectA, projectB, ...extra].map((ns) =>
        ns?.remove().catch(() => undefined),
      ),
    );
  });

  test('a project’s pod reaches no pod or Service of another project, nor a pod of the platform’s', async () => {
    await expectReach(
      'tenant',
      {
        otherProjectPod: podUrl('web'),
        otherProjectService: webService,
        platformPod: podUrl('api'),
      },
      {
        otherProjectPod: expect.stringMatching(BLOCKED),
        otherProjectService: expect.stringMatching(BLOCKED),
        platformPod: expect.stringMatching(BLOCKED),
      },
    );
  }, 60_000);

  test('a new pod of a project reaches no pod or Service of another project from its first moment', async () => {
    const ROUNDS = 25;
    // From its first instruction, ROUNDS times 20 ms apart: another project's app by pod and by
    // Service; then it serves what it got, with the milliseconds since it started.
    const FIRST_MOMENTS = `
const http = require('node:http');
const targets = JSON.parse(process.argv[1]);
const started = Date.now();
const attempt = (url) => new Promise((resolve) => {
  const req = http.get(url, { agent: false, timeout: 1000 }, (res) => { res.resume(); resolve('CONNECTED'); });
  req.once('timeout', () => { req.destroy(); resolve('timeout'); });
  req.once('error', (err) => resolve(err.code ?? String(err)));
});
const seen = [];
(async () => {
  for (let round = 0; round < ${ROUNDS}; round++) {
    for (const url of targets) seen.push([Date.now() - started, url, await attempt(url)]);
    await new Promise((r) => setTimeout(r, 20));
  }
  http.createServer((req, res) => res.end(req.url === '/ready' ? 'ok' : JSON.stringify(seen))).listen(${APP_PORT});
})();
`;
    const name = 'newcomer';
    const c = id();
    await new KubernetesReleases(kubeConfigOf(cluster), settings).apply(
      projectNamespaceObjects(settings, c),
    );
    const projectC = namespaceHandle(cluster, appNamespaceOf(settings, c));
    extra.push(projectC);
    await waitFor(
      () =>
        projectC.core.readNamespacedServiceAccount({ name: 'default', namespace: projectC.name }),
      { timeoutMs: 60_000, what: 'the project namespace’s ServiceAccount' },
    );
    await projectC
      .runPod(
        await nodePod(cluster, {
          name,
          args: ['-e', FIRST_MOMENTS, JSON.stringify([podUrl('web'), webService])],
          readyPath: '/ready',
        }),
      )
      .then((pod) => (pods[name] = pod));
    const seen = (await (await fetch(podUrl(name))).json()) as [number, string, string][];
    expect(seen.length).toBe(2 * ROUNDS);
    expect(seen.filter(([, , result]) => !BLOCKED.test(result))).toEqual([]);
  }, 120_000);

  test('the cluster stores the project’s policy and limits as the runner wrote them', async () => {
    const written = projectNamespaceObjects(settings, projectIdA) as Kubernetes.KubernetesObject[];
    const specOf = (kind: string, name: string) =>
      (written.find((o) => o.kind === kind && o.metadata?.name === name) as { spec: object }).spec;
    const networking = kubeConfigOf(cluster).makeApiClient(k8s.NetworkingV1Api);
    const policy = await networking.readNamespacedNetworkPolicy({
      name: 'tenant-traffic',
      namespace: projectA.name,
    });
    const limits = await projectA.core.readNamespacedLimitRange({
      name: 'containers',
      namespace: projectA.name,
    });
    // Read back through the client's models (`_from`, `_default`), compared as the API has them.
    expect(
      JSON.parse(JSON.stringify(policy.spec?.ingress).replaceAll('"_from"', '"from"')),
    ).toEqual((specOf('NetworkPolicy', 'tenant-traffic') as { ingress: unknown }).ingress);
    expect(limits.spec?.limits[0]?._default).toEqual(
      (specOf('LimitRange', 'containers') as { limits: { default: object }[] }).limits[0]!.default,
    );
  });

  test('a project’s pod resolves names through the cluster DNS', async () => {
    await expectReach(
      'tenant',
      { dns: 'dns:kubernetes.default.svc.cluster.local' },
      { dns: '10.96.0.1' },
    );
  }, 60_000);

  test('the router’s namespace reaches the app by pod and by Service', async () => {
    await expectReach(
      'router',
      { pod: podUrl('web'), service: webService },
      { pod: 'web', service: 'web' },
    );
  }, 60_000);

  test('the host reaches the app by its Service and every pod by its address', async () => {
    expect(await (await fetch(webService)).text()).toBe('web');
    for (const name of ['web', 'tenant', 'api', 'router']) {
      expect(await (await fetch(podUrl(name))).text()).toBe(name);
    }
  });
});
