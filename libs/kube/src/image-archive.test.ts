import { randomBytes } from 'node:crypto';
import { findOrStartCluster, type Cluster } from './cluster';
import { imageArchive, pushImageArchive } from './image-archive';
import { Registry } from './registry';
import {
  nodePod,
  RESTRICTED_POD_SECURITY,
  testNamespace,
  type TestNamespace,
} from './testing/pods';

/**
 * Images as `docker save` archives (what kaniko reads a base image from and writes a build to):
 * the Node base image read out of the registry as an archive and pushed back from it under a
 * repository of its own keeps its layers, gains the label, and runs.
 */

describe('image archives', () => {
  let cluster: Cluster;
  let ns: TestNamespace;

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    ns = await testNamespace(cluster, 'image-archive', RESTRICTED_POD_SECURITY);
  }, 50 * 60_000);

  afterAll(async () => {
    await ns?.remove();
  });

  test('an image read as an archive and pushed from it has the same layers, the label, and runs', async () => {
    const registry = new Registry(cluster.registry);
    const base = await registry.pinned(cluster.nodeImage);
    const { archive, manifest } = await imageArchive(registry, base);
    const repository = `test/archive-${randomBytes(4).toString('hex')}`;

    const pushed = await pushImageArchive(registry, archive, repository, 'v1', { built: 'yes' });

    const original = await registry.readImage(base);
    const copy = await registry.readImage(pushed.reference);
    expect(JSON.parse(manifest.toString('utf8'))).toEqual(original.manifest);
    expect(copy.manifest.layers.map((l) => l.digest)).toEqual(
      original.manifest.layers.map((l) => l.digest),
    );
    expect(copy.config.config?.Labels).toEqual({ built: 'yes' });
    expect(copy.config.config?.User).toBe(original.config.config?.User);
    const pod = await nodePod(cluster, {
      name: 'copy',
      args: ['-e', 'require("http").createServer((q, s) => s.end("copy")).listen(8080)'],
      readyPath: '/',
    });
    pod.spec!.containers[0]!.image = pushed.reference;
    const running = await ns.runPod(pod);
    expect(await (await fetch(`http://${running.status?.podIP}:8080/`)).text()).toBe('copy');
    await registry.remove(repository, 'v1');
  }, 180_000);
});
