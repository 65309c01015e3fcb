import { findOrStartCluster, k8s, kubeConfigOf, type Cluster } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import { KubernetesAppLogs } from './app-logs';
import { appNamespaceOf, type KubernetesRunnerSettings } from './objects';
import { KubernetesReleases } from './releases';
import { deleteProjectNamespace, scriptRelease, testId, testRunnerSettings } from './testing';

/**
 * Apps' output on a real cluster (scripts/infra kube, or the one KUBECONFIG names): what the pods
 * of a release print, read through the API server by KubernetesAppLogs as the pipeline reads it
 * (from an offset, again and again), each line once.
 */

/** Prints 50 lines at start, then `?print=n` more at each request; answers with its pod's name. */
const printer = `
const name = require('node:os').hostname();
for (let i = 1; i <= 50; i++) console.log(name + ' start ' + i);
let more = 0;
require('node:http').createServer((req, res) => {
  const n = Number(new URL(req.url, 'http://app').searchParams.get('print') ?? 0);
  for (let i = 0; i < n; i++) console.log(name + ' more ' + ++more);
  res.end(name);
}).listen(Number(process.env.PORT));
`;

/** Prints when it starts, serves, and exits with 1 after 8 s: each run a line of its own. */
const crasher = `
console.log('run at ' + Date.now());
require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT));
setTimeout(() => process.exit(1), 8000);
`;

const linesOf = (text: string) => text.split('\n').filter(Boolean);

describe('Kubernetes app logs (a release’s pods’ output)', () => {
  let cluster: Cluster;
  let settings: KubernetesRunnerSettings;
  let releases: KubernetesReleases;
  let logs: KubernetesAppLogs;
  const projectId = testId();

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    settings = testRunnerSettings(cluster, { buildNamespace: 'platform-builds' });
    releases = new KubernetesReleases(kubeConfigOf(cluster), settings);
    logs = new KubernetesAppLogs(kubeConfigOf(cluster), settings);
  }, 50 * 60_000);

  afterAll(async () => {
    await deleteProjectNamespace(cluster, settings, projectId);
  });

  const podsOf = async (deploymentId: string) =>
    (
      await kubeConfigOf(cluster)
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedPod({
          namespace: appNamespaceOf(settings, projectId),
          labelSelector: `platform.dev/deployment-id=${deploymentId}`,
        })
    ).items;

  test('two replicas’ lines are read in full, then only what they print after the offset', async () => {
    const release = await scriptRelease(
      cluster,
      { serviceId: testId(), projectId, replicas: 2 },
      printer,
    );
    expect(await releases.deploy(release)).toEqual({ outcome: 'DEPLOYED' });
    const releaseId = release.spec.deploymentId;
    expect(await logs.list()).toContainEqual({ releaseId, state: 'live' });

    const pods = (await podsOf(releaseId)).filter((pod) => !pod.metadata?.deletionTimestamp);
    expect(pods).toHaveLength(2);
    const names = pods.map((pod) => pod.metadata!.name!);
    // Both pods printed their 50 lines before they were ready; each is read once, in its order.
    const full = await waitFor(
      async () => {
        const read = await logs.readLog(releaseId, 0);
        return linesOf(read.text).length >= 100 ? read : null;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'both pods’ 100 lines' },
    );
    const startLines = (name: string) =>
      Array.from({ length: 50 }, (_, i) => `${name} start ${i + 1}`);
    for (const name of names) {
      expect(linesOf(full.text).filter((line) => line.startsWith(`${name} `))).toEqual(
        startLines(name),
      );
    }
    expect(linesOf(full.text)).toHaveLength(100);
    expect(full.text.endsWith('\n')).toBe(true);

    // Nothing new: nothing, and the same offset.
    expect(await logs.readLog(releaseId, full.nextOffset)).toEqual({
      text: '',
      nextOffset: full.nextOffset,
    });

    // Each pod prints 3 more lines; read on from the offset as a follower does, until all are in.
    for (const pod of pods) {
      expect(await (await fetch(`http://${pod.status!.podIP}:8080/?print=3`)).text()).toBe(
        pod.metadata!.name,
      );
    }
    let offset = full.nextOffset;
    let followed = '';
    await waitFor(
      async () => {
        const read = await logs.readLog(releaseId, offset);
        followed += read.text;
        offset = read.nextOffset;
        return linesOf(followed).length >= 6;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the 6 new lines' },
    );
    const moreLines = (name: string) => [1, 2, 3].map((i) => `${name} more ${i}`);
    expect(linesOf(followed).sort()).toEqual(names.flatMap(moreLines).sort());
    for (const name of names) {
      expect(linesOf(followed).filter((line) => line.startsWith(`${name} `))).toEqual(
        moreLines(name),
      );
    }
    expect(offset).toBeGreaterThan(full.nextOffset);
    expect((await logs.readLog(releaseId, offset)).text).toBe('');
  }, 420_000);

  test('a container that restarted gives what its previous run printed too', async () => {
    const release = await scriptRelease(cluster, { serviceId: testId(), projectId }, crasher);
    await releases.applyRelease(release);
    const releaseId = release.spec.deploymentId;
    // The second run is up: the first one's output is the previous container's.
    await waitFor(
      async () => {
        const [pod] = await podsOf(releaseId);
        const status = pod?.status?.containerStatuses?.[0];
        return (status?.restartCount ?? 0) >= 1 && status?.state?.running;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the app’s second run' },
    );
    const runs = await waitFor(
      async () => {
        const lines = linesOf((await logs.readLog(releaseId, 0)).text);
        return lines.length >= 2 ? lines : null;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'both runs’ lines' },
    );
    expect(runs).toHaveLength(2);
    const [first, second] = runs.map((line) => Number(/^run at (\d+)$/.exec(line)?.[1]));
    expect(second! - first!).toBeGreaterThanOrEqual(8000);
  }, 240_000);
});
