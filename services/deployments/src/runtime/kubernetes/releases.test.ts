import { get } from 'node:http';
import { findOrStartCluster, kubeConfigOf, k8s, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import { deleteProjectNamespace, scriptRelease, testId, testRunnerSettings } from './testing';
import { KubernetesReleases, type Release } from './releases';

/**
 * DEPLOYING on a real cluster (scripts/infra kube, or the one KUBECONFIG names): a release of an
 * image in the cluster's registry rolls out and answers at its Service; a release whose health
 * check never passes is FAILED by its progress deadline, with the reason, while the previous one
 * answers throughout, and its objects are put back.
 */

/** GET on a connection of its own (fetch keeps one open and so reaches one pod). */
const getOnNewConnection = (url: string) =>
  new Promise<string>((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });

/** An app on the Node base image: `PORT`, its version on `/`, a health check that may fail. */
const app = (version: string, healthy: boolean, listenAfterMs = 0) => `
setTimeout(() => require('node:http').createServer((req, res) => {
  if (req.url === '/healthz') res.statusCode = ${healthy ? 200 : 500};
  res.end(req.url === '/host' ? require('node:os').hostname() : '${version}');
}).listen(Number(process.env.PORT)), ${listenAfterMs});
`;

describe('Kubernetes releases (Deployment + Service, rollout watched)', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let releases: KubernetesReleases;
  const projectId = testId();
  const serviceId = testId();

  /** A release of `app` for the service, with a health check on /healthz and a variable. */
  const release = (
    version: string,
    healthy: boolean,
    listenAfterMs = 0,
    ofService = serviceId,
    ofProject = projectId,
  ): Promise<Release> =>
    scriptRelease(
      cluster,
      {
        serviceId: ofService,
        projectId: ofProject,
        healthCheckPath: '/healthz',
        variables: { GREETING: 'hello' },
      },
      app(version, healthy, listenAfterMs),
    );

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster, {
      buildNamespace: 'platform-builds',
      app: { healthCheckTimeoutSeconds: 45 },
    });
    releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
  }, 50 * 60_000);

  afterAll(async () => {
    await deleteProjectNamespace(cluster, settings, projectId);
  });

  test('newest wins: of releases applied at once, the newest is the Deployment’s, whatever the order', async () => {
    // A service (and project: its pods count against no other test's quota) of its own: the
    // others' releases carry no generation.
    const raced = testId();
    const racedProject = testId();
    for (let round = 0; round < 4; round++) {
      const racing = await Promise.all(
        [0, 1, 2].map(async (i) => ({
          ...(await release(`r${round}-${i}`, true, 0, raced, racedProject)),
          generation: `${round}-${i}`,
        })),
      );
      // Oldest first, newest first, and the middle one first: every order is raced.
      const order = [racing, [...racing].reverse(), [racing[1]!, racing[2]!, racing[0]!]][
        round % 3
      ]!;

      const results = await Promise.all(order.map((r) => releases.applyNewest(r)));

      const live = await releases.live(racing[2]!.spec);
      expect(live).toMatchObject({
        deploymentId: racing[2]!.spec.deploymentId,
        generation: `${round}-2`,
      });
      // A refused one names a newer release that was the Deployment's when it was refused.
      for (const [index, result] of results.entries()) {
        if (result.applied) continue;
        const newer = racing.find((r) => r.spec.deploymentId === result.newer)!;
        expect(newer.generation! > order[index]!.generation!).toBe(true);
      }
      // The newest is never refused; an older one applied late is.
      expect(results[order.indexOf(racing[2]!)]).toEqual({ applied: true });
      expect(await releases.applyNewest(racing[0]!)).toEqual({
        applied: false,
        newer: racing[2]!.spec.deploymentId,
      });
    }
    await deleteProjectNamespace(cluster, settings, racedProject);
  }, 300_000);

  test('a healthy release is DEPLOYED and answers; one that never gets healthy is FAILED while the first answers', async () => {
    const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
    const namespace = appNamespaceOf(settings, projectId);
    const first = await release('v1', true);
    // A wide deadline where the release must succeed (a busy machine starts pods slowly).
    const patient = new KubernetesReleases(kubeConfigOf(cluster), {
      ...settings,
      app: { ...settings.app, healthCheckTimeoutSeconds: 300 },
    });
    expect(await patient.deploy(first)).toEqual({ outcome: 'DEPLOYED' });

    const service = await core.readNamespacedService({ name: `app-${serviceId}`, namespace });
    const url = `http://${service.spec?.clusterIP}/`;
    await waitFor(async () => (await (await fetch(url)).text()) === 'v1', {
      timeoutMs: 30_000,
      what: `${url} to answer v1`,
    });

    // While the second rolls out and fails, every answer is the first's.
    const answers: string[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        answers.push(await (await fetch(url)).text().catch((err: unknown) => String(err)));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const second = await release('v2', false);
    const result = await releases.deploy(second, first);
    polling = false;
    await poller;

    expect(result.outcome).toBe('FAILED');
    expect(result.reason).toMatch(
      /^progress deadline exceeded \(45 s\): running, readiness never passed/,
    );
    expect(answers.length).toBeGreaterThan(20);
    expect(new Set(answers)).toEqual(new Set(['v1']));

    const apps = kubeConfigOf(cluster).makeApiClient(k8s.AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({ name: `app-${serviceId}`, namespace });
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe(first.image);
    expect(await (await fetch(url)).text()).toBe('v1');
  }, 420_000);

  test('a restarted deployments service picks up a rollout in progress and gets its verdict', async () => {
    const namespace = appNamespaceOf(settings, projectId);
    const patient = { ...settings, app: { ...settings.app, healthCheckTimeoutSeconds: 300 } };
    // This service applies the release and is gone before the rollout ends (the new pod
    // answers only after 5 s)...
    const slow = await release('v3', true, 5_000);
    await new KubernetesReleases(kubeConfigOf(cluster), patient).applyRelease(slow);
    // ...and the next one, with nothing but the cluster to go on, watches it to its end.
    const restarted = new KubernetesReleases(kubeConfigOf(cluster), patient);
    expect(await restarted.watchRollout(slow.spec)).toEqual({ outcome: 'DEPLOYED' });
    // One restarted after the rollout ended reads the verdict at once (its deadline is short).
    const late = new KubernetesReleases(kubeConfigOf(cluster), {
      ...settings,
      app: { ...settings.app, healthCheckTimeoutSeconds: 1 },
    });
    expect(await late.watchRollout(slow.spec)).toEqual({ outcome: 'DEPLOYED' });
    const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
    const service = await core.readNamespacedService({ name: `app-${serviceId}`, namespace });
    await waitFor(
      async () => (await (await fetch(`http://${service.spec?.clusterIP}/`)).text()) === 'v3',
      {
        timeoutMs: 30_000,
        what: 'the Service to answer v3',
      },
    );
  }, 420_000);

  test('replicas: all three copies of a release are ready and each answers', async () => {
    const namespace = appNamespaceOf(settings, projectId);
    const patient = new KubernetesReleases(kubeConfigOf(cluster), {
      ...settings,
      app: { ...settings.app, healthCheckTimeoutSeconds: 300 },
    });
    const three = await release('v4', true);
    three.spec.replicas = 3;
    expect(await patient.deploy(three)).toEqual({ outcome: 'DEPLOYED' });
    const core = kubeConfigOf(cluster).makeApiClient(k8s.CoreV1Api);
    const pods = (
      await core.listNamespacedPod({
        namespace,
        labelSelector: `app.kubernetes.io/name=app-${serviceId}`,
      })
    ).items.filter(
      (pod) =>
        pod.metadata?.annotations?.['platform.dev/deployment-id'] === three.spec.deploymentId &&
        !pod.metadata?.deletionTimestamp,
    );
    expect(pods).toHaveLength(3);
    const names = await Promise.all(
      pods.map(async (pod) => (await fetch(`http://${pod.status?.podIP}:8080/host`)).text()),
    );
    expect(new Set(names)).toEqual(new Set(pods.map((pod) => pod.metadata?.name)));
    // Through the Service, requests (each on a connection of its own: kube-proxy balances
    // connections) reach each of the three.
    const service = await core.readNamespacedService({ name: `app-${serviceId}`, namespace });
    const seen = new Set<string>();
    await waitFor(
      async () => {
        seen.add(await getOnNewConnection(`http://${service.spec?.clusterIP}/host`));
        return seen.size === 3;
      },
      { timeoutMs: 60_000, intervalMs: 20, what: 'the Service to reach all three copies' },
    );
  }, 420_000);
});
