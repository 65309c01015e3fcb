import { findOrStartCluster, type Cluster } from './cluster';
import {
  nodePod,
  RESTRICTED_POD_SECURITY,
  testNamespace,
  type TestNamespace,
} from './testing/pods';

/**
 * The platform's Node base image (scripts/infra/kube/images.sh), pushed into the cluster's
 * registry by `infra.sh start kube`: a pod from it, held to Pod Security `restricted`, runs node
 * as uid 1000 with a shell and npm, and its server answers the host.
 */

const SERVER = `
const { execSync } = require('node:child_process');
const facts = {
  node: process.version,
  uid: process.getuid(),
  home: process.env.HOME,
  npm: execSync('npm --version').toString().trim(),
  shell: execSync('echo $((6 * 7))').toString().trim(),
};
require('node:http').createServer((req, res) => res.end(JSON.stringify(facts))).listen(8080);
`;

describe('the Node base image', () => {
  let cluster: Cluster;
  let ns: TestNamespace;

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    ns = await testNamespace(cluster, 'node-image', RESTRICTED_POD_SECURITY);
  }, 50 * 60_000);

  afterAll(async () => {
    await ns?.remove();
  });

  test('runs node, npm and sh as uid 1000 under Pod Security restricted; answers the host', async () => {
    const pod = await ns.runPod(
      await nodePod(cluster, { name: 'node', args: ['-e', SERVER], readyPath: '/' }),
    );
    const facts = (await (await fetch(`http://${pod.status?.podIP}:8080/`)).json()) as Record<
      string,
      unknown
    >;
    expect(facts).toEqual({
      node: 'v22.23.3',
      uid: 1000,
      home: '/home/node',
      npm: '10.9.9',
      shell: '42',
    });
  }, 180_000);
});
