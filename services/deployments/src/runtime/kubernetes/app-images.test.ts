import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOrStartCluster, Registry, type Cluster } from '@platform/kube';
import { AppImages, KEPT_IMAGES } from './app-images';
import { checkoutLayer } from './build-job';
import type { DeploymentSpec } from './objects';
import { testRunnerSettings } from './testing';

/** The app images a service keeps in the real registry of the local cluster. */

describe('AppImages', () => {
  let cluster: Cluster;
  let registry: Registry;
  let images: AppImages;
  let workspace: Buffer;
  const serviceId = randomBytes(12).toString('hex');
  /** Deployment ids as MongoDB makes them: the older, the smaller. */
  const deploymentId = (n: number) => `${'0'.repeat(20)}${n.toString(16).padStart(4, '0')}`;
  const spec = (n: number): DeploymentSpec => ({
    deploymentId: deploymentId(n),
    serviceId,
    projectId: 'p',
    accountId: 'a',
    commitHash: 'c'.repeat(40),
    repository: '',
    branch: 'main',
    rootDirectory: '',
    buildCommand: null,
    startCommand: 'node server.js',
    healthCheckPath: '/',
    variables: {},
  });

  beforeAll(async () => {
    cluster = await findOrStartCluster();
    registry = new Registry(cluster.registry);
    images = new AppImages(registry, testRunnerSettings(cluster));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'app-images-'));
    writeFileSync(path.join(dir, 'server.js'), 'console.log("the same app every time")\n');
    workspace = await checkoutLayer(dir);
    rmSync(dir, { recursive: true });
  }, 50 * 60_000);

  afterAll(() => images.removeService(serviceId));

  it('keeps the newest images and the protected one, and deletes the rest', async () => {
    const pushed = KEPT_IMAGES + 3;
    for (let n = 1; n <= pushed; n++) await images.push(spec(n), workspace);

    // The oldest serves: it stays whatever its age.
    const removed = await images.prune(serviceId, [deploymentId(1)]);

    expect(removed).toEqual([deploymentId(2), deploymentId(3)]);
    const kept = (await registry.tags(`apps/${serviceId}`)).sort();
    expect(kept).toEqual(
      [1, ...Array.from({ length: KEPT_IMAGES }, (_, i) => i + 4)].map(deploymentId),
    );
    expect(await images.find(serviceId, deploymentId(2))).toBeNull();
    expect(await images.find(serviceId, deploymentId(1))).toMatch(
      new RegExp(`^${cluster.registry}/apps/${serviceId}@sha256:[0-9a-f]{64}$`),
    );
  }, 300_000);

  it('gives each deployment its own digest, so deleting one never takes another', async () => {
    const a = await images.push(spec(100), workspace);
    const b = await images.push(spec(101), workspace);
    expect(a).not.toBe(b);

    await registry.remove(`apps/${serviceId}`, deploymentId(100));

    expect(await images.find(serviceId, deploymentId(100))).toBeNull();
    expect(await images.find(serviceId, deploymentId(101))).toBe(b);
  }, 300_000);
});
