import { request } from 'node:http';
import { findOrStartCluster, k8s, kubeConfigOf, type Cluster } from '@platform/kube';
import { startTestServer, testLogger, waitFor, type TestServer } from '@platform/shared/testing';
import { createRouter } from '../router';
import { appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import { KubernetesReleases } from './releases';
import { KubernetesRoutes } from './routes';
import { deleteProjectNamespace, scriptRelease, testId, testRunnerSettings } from './testing';

/**
 * The router on Kubernetes, on a real cluster (scripts/infra kube, or the one KUBECONFIG names):
 * createRouter with KubernetesRoutes sends `<serviceId>.localhost` to the ready pods behind that
 * service's Service (its EndpointSlices), as the gateway's RUNTIME_ROUTER_URL would reach it;
 * Services applied and deleted are followed by the watch, and stop() leaves no connection behind.
 */

/** An app that says which service it is. */
const greeter = (name: string) =>
  `require('node:http').createServer((req, res) => res.end('this is ${name}')).listen(Number(process.env.PORT));`;

/** Sockets of this process (connections, not listening servers). */
const openSockets = () =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TLSSocketWrap');

describe('Kubernetes routes (the router to the live release’s Service)', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let releases: KubernetesReleases;
  let routes: KubernetesRoutes;
  let router: TestServer;
  const projectId = testId();
  const first = testId();
  const second = testId();

  /** GET through the router as the gateway forwards it, on a connection of its own. */
  const get = (serviceId: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${router.url}/`,
        { headers: { host: `${serviceId}.localhost:8080` }, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  const deploy = async (serviceId: string) => {
    const release = await scriptRelease(cluster, { serviceId, projectId }, greeter(serviceId));
    expect(await releases.deploy(release)).toEqual({ outcome: 'DEPLOYED' });
  };

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster, { buildNamespace: 'platform-builds' });
    releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
    // Released before the routes start: found by their first list.
    await deploy(first);
    // Each watch ended by the API server after 1 s: the tests below run across many of them.
    routes = new KubernetesRoutes(kubeConfigOf(cluster), settings, testLogger('routes'), {
      watchTimeoutSeconds: 1,
    });
    await routes.start();
    router = await startTestServer(createRouter(routes.liveRelease, testLogger('router')));
  }, 50 * 60_000);

  afterAll(async () => {
    await router?.close();
    await routes?.stop();
    await deleteProjectNamespace(cluster, settings, projectId);
  });

  test('a service’s host reaches its Service; a host naming no service is 404', async () => {
    // kube-proxy makes a new Service's address answer moments after the rollout (502 until then).
    await waitFor(async () => (await get(first)).status === 200, {
      timeoutMs: 30_000,
      what: `${first} to answer`,
    });
    expect(await get(first)).toEqual({ status: 200, body: `this is ${first}` });
    const unknown = await get(testId());
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ error: 'NOT_FOUND' });
  });

  test('a service released after the start, and after the API server ended the watch, is routed too, each to its own', async () => {
    expect((await get(second)).status).toBe(404);
    const made = routes.watchesMade;
    await waitFor(() => routes.watchesMade >= made + 2, {
      timeoutMs: 60_000,
      what: 'the API server to end the watch twice',
    });
    await deploy(second);
    await waitFor(async () => (await get(second)).status === 200, {
      timeoutMs: 30_000,
      what: `${second} to be routed`,
    });
    expect(await get(second)).toEqual({ status: 200, body: `this is ${second}` });
    expect(await get(first)).toEqual({ status: 200, body: `this is ${first}` });
  }, 420_000);

  test('a deleted Service answers 404 while the other goes on', async () => {
    await kubeConfigOf(cluster)
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespacedService({
        name: `app-${first}`,
        namespace: appNamespaceOf(settings, projectId),
      });
    await waitFor(async () => (await get(first)).status === 404, {
      timeoutMs: 30_000,
      what: `${first} to answer 404`,
    });
    expect(await get(second)).toEqual({ status: 200, body: `this is ${second}` });
  }, 60_000);

  test('stop ends the watch and closes the agents: no connection is left open', async () => {
    // Requests went through a keep-alive agent; the watch holds a connection to the API server.
    expect(openSockets().length).toBeGreaterThan(0);
    // An idle kept-alive socket is unref'd (not among openSockets), but holds a descriptor.
    const kept = Object.values(routes.liveRelease(second)!.agent.freeSockets).flat();
    expect(kept).toHaveLength(1);
    await router.close();
    await routes.stop();
    expect(routes.liveRelease(second)).toBeUndefined();
    expect(kept.every((socket) => socket!.destroyed)).toBe(true);
    // Within less than the apps' keep-alive timeout (Node's 5 s): closed by stop(), not by them.
    await waitFor(() => openSockets().length === 0, {
      timeoutMs: 3_000,
      what: `no open socket (left: ${openSockets().join(', ')})`,
    });
  });
});
