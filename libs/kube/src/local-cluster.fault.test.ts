import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@platform/shared/testing';
import { infra, localClusterUrls, type Cluster } from './cluster';
import { Registry } from './registry';
import { hostDifferences, stableHostState, type HostState } from './testing/host-state';
import { testNamespace } from './testing/pods';

/**
 * scripts/infra's single-node cluster (`infra.sh start|stop kube`), for real: it starts, runs a pod
 * from an image pushed to its registry, the pod answers the host at its address and its Service's,
 * and stop leaves the host as start found it. A fault test (run alone, after the others, by
 * `npm test`): it stops the cluster. It always tests the local cluster, whatever KUBECONFIG says.
 * The first start on a machine builds everything (tens of minutes under load); later ones are
 * cached under ~/.cache/platform-dev/kube.
 */

const run = promisify(execFile);
const START_MS = 45 * 60_000;
const STOP_MS = 5 * 60_000;

/** A layer holding Debian's static busybox and a page: an image made without any base image. */
async function busyboxLayer(page: string): Promise<Buffer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-layer-'));
  try {
    mkdirSync(path.join(dir, 'bin'));
    mkdirSync(path.join(dir, 'www'));
    copyFileSync('/bin/busybox', path.join(dir, 'bin/busybox'));
    writeFileSync(path.join(dir, 'www/index.html'), page);
    const { stdout } = await run('tar', ['-C', dir, '-cf', '-', 'bin', 'www'], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the local cluster (scripts/infra/infra.sh start|stop kube)', () => {
  let before: HostState;
  let cluster: Cluster;
  let started = false;

  beforeAll(
    async () => {
      await infra(['stop', 'kube'], STOP_MS); // a cluster left running: its changes go first
      before = await stableHostState();
      await infra(['start', 'kube'], START_MS);
      started = true;
      cluster = await localClusterUrls();
    },
    START_MS + 2 * STOP_MS,
  );

  afterAll(async () => {
    if (started) await infra(['stop', 'kube'], STOP_MS);
  }, STOP_MS);

  test('status says running and url gives KUBECONFIG and the registry', async () => {
    expect(await infra(['status', 'kube'], 60_000)).toMatch(/^kube\s+running/);
    expect(cluster.kubeconfigPath).toMatch(/admin\.kubeconfig$/);
    expect(cluster.registry).toBe('127.0.0.1:5000');
  });

  test('a pod from an image pushed to the registry answers the host, by its IP and its Service', async () => {
    const token = randomBytes(8).toString('hex');
    const image = await new Registry(cluster.registry).pushImage(
      'cluster-test/busybox',
      token,
      [await busyboxLayer(`hello ${token}\n`)],
      { entrypoint: ['/bin/busybox'] },
    );
    const ns = await testNamespace(cluster, 'cluster-test');
    try {
      await ns.core.createNamespacedService({
        namespace: ns.name,
        body: {
          metadata: { name: 'hello' },
          spec: { selector: { app: 'hello' }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      const pod = await ns.runPod({
        metadata: { name: 'hello', labels: { app: 'hello' } },
        spec: {
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'hello',
              image: image.reference,
              // The cluster's DNS answers for the Service's name; the page says what it got.
              args: [
                'sh',
                '-c',
                `/bin/busybox nslookup hello.${ns.name}.svc.cluster.local > /www/dns.txt 2>&1; ` +
                  'echo started; exec /bin/busybox httpd -f -p 8080 -h /www',
              ],
              readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      });
      const byPod = await fetch(`http://${pod.status?.podIP}:8080/`);
      expect(await byPod.text()).toBe(`hello ${token}\n`);

      const service = await ns.core.readNamespacedService({ name: 'hello', namespace: ns.name });
      const clusterIp = service.spec?.clusterIP ?? '';
      expect(clusterIp).toMatch(/^10\.96\./);
      // kube-proxy programs the Service once the pod's endpoint is published: moments later.
      const byService = await waitFor(async () => (await fetch(`http://${clusterIp}/`)).text(), {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: `the Service ${clusterIp} to answer`,
      });
      expect(byService).toBe(`hello ${token}\n`);
      expect(await (await fetch(`http://${clusterIp}/dns.txt`)).text()).toContain(clusterIp);

      // Logs come from the kubelet through the apiserver (--kubelet-preferred-address-types).
      const log = await ns.core.readNamespacedPodLog({ name: 'hello', namespace: ns.name });
      expect(log).toContain('started');
    } finally {
      await ns.remove();
    }
  }, 180_000);

  test(
    'stop leaves the host as start found it',
    async () => {
      const running = hostDifferences(before, await stableHostState());
      // What a running cluster changed, so that the comparison below can see a change at all.
      expect(running).toEqual(
        expect.arrayContaining([
          'link added: kbr0',
          'nftables table added: ip kube-proxy',
          'nftables table added: ip platform_kube',
        ]),
      );
      await infra(['stop', 'kube'], STOP_MS);
      started = false;
      expect(hostDifferences(before, await stableHostState())).toEqual([]);
      const status = await infra(['status', 'kube'], 60_000).catch(
        (err: { stdout: string }) => err.stdout,
      );
      expect(status).toMatch(/^kube\s+stopped/);
    },
    STOP_MS + 60_000,
  );
});
