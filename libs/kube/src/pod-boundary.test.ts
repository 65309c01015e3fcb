import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { waitFor } from '@platform/shared/testing';
import { findOrStartCluster, type Cluster } from './cluster';
import {
  nodePod,
  RESTRICTED_POD_SECURITY,
  testNamespace,
  type TestNamespace,
} from './testing/pods';

/**
 * What a tenant's pod can reach on the local cluster (contracts.md, "What a tenant's code can
 * reach"; scripts/infra/kube/run.sh's nftables table): not the kubelet, not the apiserver, not a
 * server of the host's on 0.0.0.0, by any of the host's addresses; but the cluster DNS and other
 * pods through their Service.
 */

/** Tries each `host:port` of TARGETS (JSON in argv) from inside the pod; serves the results. */
const PROBE = `
const net = require('node:net');
const dns = require('node:dns').promises;
const targets = JSON.parse(process.argv[1]);
const tryConnect = ([host, port]) => new Promise((resolve) => {
  const socket = net.connect({ host, port, timeout: 3000 });
  socket.once('connect', () => { socket.destroy(); resolve('connected'); });
  socket.once('timeout', () => { socket.destroy(); resolve('timeout'); });
  socket.once('error', (err) => resolve(err.code));
});
let results = null;
require('node:http').createServer(async (req, res) => {
  if (req.url === '/ready') return res.end('ok');
  results ??= {
    dns: await dns.lookup('kubernetes.default.svc.cluster.local').then((a) => a.address, (e) => e.code),
    ...Object.fromEntries(await Promise.all(
      Object.entries(targets).map(async ([name, target]) => [name, await tryConnect(target)]))),
  };
  res.end(JSON.stringify(results));
}).listen(8080);
`;

const hostAddress = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal && !a.address.startsWith('10.244.'))
    ?.address;

describe('a tenant pod on the local cluster', () => {
  let cluster: Cluster;
  let ns: TestNamespace;
  let server: Server;

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    ns = await testNamespace(cluster, 'boundary', RESTRICTED_POD_SECURITY);
    // A server of the host's on every address, as a careless platform process would have.
    server = createServer((req, res) => res.end('host'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  }, 50 * 60_000);

  afterAll(async () => {
    server?.close();
    await ns?.remove();
  });

  test('reaches the cluster DNS and a Service, never the kubelet, the apiserver or the host', async () => {
    const port = (server.address() as AddressInfo).port;
    await ns.core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'probe' },
        spec: { selector: { app: 'probe' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const service = await ns.core.readNamespacedService({ name: 'probe', namespace: ns.name });
    const targets = {
      ownService: [service.spec?.clusterIP, 80],
      kubelet: ['10.244.0.1', 10250],
      apiserverService: ['10.96.0.1', 443],
      hostServerByNodeAddress: ['10.244.0.1', port],
      hostServerByHostAddress: [hostAddress(), port],
      hostLoopbackRedis: ['127.0.0.1', 6379],
    };
    const pod = await ns.runPod(
      await nodePod(cluster, {
        name: 'probe',
        labels: { app: 'probe' },
        args: ['-e', PROBE, JSON.stringify(targets)],
        readyPath: '/ready',
      }),
    );
    // The host itself reaches its server on that address: the pod's refusal is the boundary's.
    expect(await (await fetch(`http://${hostAddress()}:${port}/`)).text()).toBe('host');
    // kube-proxy programs the Service moments after the pod is ready.
    await waitFor(async () => (await fetch(`http://${service.spec?.clusterIP}/ready`)).ok, {
      timeoutMs: 30_000,
      what: 'the Service to answer',
    });
    const results = (await (await fetch(`http://${pod.status?.podIP}:8080/`)).json()) as Record<
      string,
      string
    >;
    expect(results).toEqual({
      dns: '10.96.0.1',
      ownService: 'connected',
      kubelet: 'ECONNREFUSED',
      // kube-proxy sends it to 10.244.0.1:6443, where the node refuses (or, the reset not
      // translated back, lets it time out).
      apiserverService: expect.stringMatching(/^(ECONNREFUSED|timeout)$/),
      hostServerByNodeAddress: 'ECONNREFUSED',
      hostServerByHostAddress: 'ECONNREFUSED',
      hostLoopbackRedis: 'ECONNREFUSED',
    });
  }, 180_000);
});
