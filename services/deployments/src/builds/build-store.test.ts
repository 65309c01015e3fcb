import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mountsUnder } from '@platform/shared';
import { BuildDisks } from './build-disk';
import { BuildStore, KEPT_BUILDS_PER_SERVICE, type BuildRef } from './build-store';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'build-store-test-'));
});
afterEach(async () => {
  // A test that failed midway may leave a disk mounted: rm would empty it, not remove it.
  for (const point of await mountsUnder(root)) spawnSync('umount', [point]);
  await rm(root, { recursive: true, force: true });
});

const service = { projectId: 'p1', serviceId: 's1' };
const ref = (deploymentId: string, where = service): BuildRef => ({ ...where, deploymentId });
// Ids sort in the order they are made, as ObjectIds do.
const id = (n: number) => `d${String(n).padStart(3, '0')}`;

/** A build that ran: prepared, its workspace written, marked successful. */
async function succeed(store: BuildStore, build: BuildRef, protect: string[] = []) {
  const { workspace } = await store.prepare(build);
  await mkdir(workspace);
  await writeFile(path.join(workspace, 'server.js'), `// ${build.deploymentId}\n`);
  return store.markSuccessful(build, { commitHash: 'a'.repeat(40), protect });
}

const keptIds = async (store: BuildStore, where = service) =>
  (await store.list(where)).map((build) => build.deploymentId);

describe('BuildStore', () => {
  it('hands out a fresh directory per deployment and finds the build once it is marked successful', async () => {
    const store = new BuildStore(root);
    const build = ref(id(1));

    const prepared = await store.prepare(build);
    expect(prepared).toEqual({
      dir: path.join(root, 'p1', 's1', id(1)),
      workspace: path.join(root, 'p1', 's1', id(1), 'disk', 'workspace'),
      tmp: path.join(root, 'p1', 's1', id(1), 'disk', 'tmp'),
    });
    expect(existsSync(prepared.dir)).toBe(true);
    expect(existsSync(prepared.workspace)).toBe(false);
    expect(await store.find(build)).toBeNull();

    const kept = await succeed(store, build);

    expect(kept).toMatchObject({ ...build, ...prepared, commitHash: 'a'.repeat(40) });
    expect(await store.find(build)).toEqual(kept);
    expect(await store.find(ref(id(2)))).toBeNull();
  });

  it('makes a kept build root’s and readable by every uid, writable by none but root, without following links', async () => {
    const store = new BuildStore(root);
    const build = ref(id(1));
    const { workspace } = await store.prepare(build);
    // As a build leaves it: its sandbox uid's, some of it private, a link pointing outside.
    await mkdir(path.join(workspace, 'lib'), { recursive: true });
    await writeFile(path.join(workspace, 'lib', 'secret.js'), 'x', { mode: 0o600 });
    await writeFile(path.join(workspace, 'start.sh'), 'x', { mode: 0o777 });
    const outside = path.join(root, 'outside.txt');
    await writeFile(outside, 'not the build’s', { mode: 0o600 });
    await chown(outside, 2_000_456, 2_000_456);
    await symlink(outside, path.join(workspace, 'escape'));
    for (const file of [
      workspace,
      path.join(workspace, 'lib'),
      path.join(workspace, 'lib', 'secret.js'),
      path.join(workspace, 'start.sh'),
    ]) {
      await chown(file, 2_000_123, 2_000_123);
    }
    await chmod(path.join(workspace, 'lib'), 0o700);

    await store.markSuccessful(build, { commitHash: 'a'.repeat(40) });

    const modeOf = (file: string) => {
      const stat = statSync(file);
      return { uid: stat.uid, gid: stat.gid, mode: (stat.mode & 0o7777).toString(8) };
    };
    expect(modeOf(workspace)).toEqual({ uid: 0, gid: 0, mode: '755' });
    expect(modeOf(path.join(workspace, 'lib'))).toEqual({ uid: 0, gid: 0, mode: '755' });
    expect(modeOf(path.join(workspace, 'lib', 'secret.js'))).toEqual({
      uid: 0,
      gid: 0,
      mode: '644',
    });
    expect(modeOf(path.join(workspace, 'start.sh'))).toEqual({ uid: 0, gid: 0, mode: '755' });
    // The file a link points at is not the build's: untouched.
    expect(modeOf(outside)).toEqual({ uid: 2_000_456, gid: 2_000_456, mode: '600' });
  });

  it(`keeps the newest ${KEPT_BUILDS_PER_SERVICE} successful builds of a service and deletes the older ones`, async () => {
    const store = new BuildStore(root);
    const other = { projectId: 'p1', serviceId: 's2' };
    await succeed(store, ref(id(1), other));

    for (let n = 1; n <= 12; n += 1) await succeed(store, ref(id(n)));

    expect(await keptIds(store)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3].map(id));
    expect(await store.find(ref(id(1)))).toBeNull();
    expect(await store.find(ref(id(2)))).toBeNull();
    expect(existsSync(path.join(root, 'p1', 's1', id(2)))).toBe(false);
    expect(await keptIds(store, other)).toEqual([id(1)]);
    expect(await readdir(path.join(root, '.trash'))).toEqual([]);
  });

  it('never deletes a protected build (the one serving now), nor a build still running', async () => {
    const store = new BuildStore(root, { keepPerService: 2 });
    await succeed(store, ref(id(1)));
    const running = await store.prepare(ref(id(2)));
    await mkdir(running.workspace);

    for (let n = 3; n <= 5; n += 1) await succeed(store, ref(id(n)), [id(1)]);

    expect(await keptIds(store)).toEqual([id(5), id(4), id(1)]);
    expect(existsSync(running.workspace)).toBe(true);
  });

  it('keeps exactly the newest builds when workers sharing the directory finish at the same time', async () => {
    const stores = [new BuildStore(root), new BuildStore(root), new BuildStore(root)];
    for (let n = 1; n <= KEPT_BUILDS_PER_SERVICE; n += 1) await succeed(stores[0]!, ref(id(n)));

    for (let round = 0; round < 5; round += 1) {
      const first = KEPT_BUILDS_PER_SERVICE + 1 + round * stores.length;
      const finishing = stores.map((_, i) => id(first + i));
      await Promise.all(
        finishing.map(async (deploymentId, i) => {
          const { workspace } = await stores[i]!.prepare(ref(deploymentId));
          await mkdir(workspace);
        }),
      );
      await Promise.all(
        finishing.map((deploymentId, i) =>
          stores[i]!.markSuccessful(ref(deploymentId), { commitHash: 'b'.repeat(40) }),
        ),
      );
      // Whatever order they wrote in, a last prune by anyone leaves the newest ten.
      await stores[0]!.prune(service);

      const kept = await keptIds(stores[0]!);
      expect(kept).toHaveLength(KEPT_BUILDS_PER_SERVICE);
      expect(kept).toEqual(expect.arrayContaining(finishing));
    }
    const directories = await readdir(path.join(root, 'p1', 's1'));
    expect(directories.sort()).toEqual((await keptIds(stores[0]!)).sort());
  });

  it('starts an attempt afresh: prepare discards what an earlier attempt left', async () => {
    const store = new BuildStore(root);
    const build = ref(id(1));
    await succeed(store, build);

    const again = await store.prepare(build);

    expect(await readdir(again.dir)).toEqual(['disk']);
    expect(await readdir(path.join(again.dir, 'disk'))).toEqual(['tmp']);
    expect(await store.find(build)).toBeNull();
  });

  it('discards a failed build, and removes every build of a deleted service or project', async () => {
    const store = new BuildStore(root);
    const otherService = { projectId: 'p1', serviceId: 's2' };
    const otherProject = { projectId: 'p2', serviceId: 's3' };
    await store.prepare(ref(id(1)));
    await succeed(store, ref(id(2)));
    await succeed(store, ref(id(3), otherService));
    await succeed(store, ref(id(4), otherProject));

    await store.discard(ref(id(1)));
    expect(existsSync(path.join(root, 'p1', 's1', id(1)))).toBe(false);
    await store.discard(ref(id(99)));

    await store.removeService(service);
    expect(await keptIds(store)).toEqual([]);
    expect(await keptIds(store, otherService)).toEqual([id(3)]);

    await store.removeProject('p1');
    expect(existsSync(path.join(root, 'p1'))).toBe(false);
    expect(await keptIds(store, otherProject)).toEqual([id(4)]);
    await store.removeProject('p1');
  });

  it('refuses ids that would leave its directory, and a relative directory', async () => {
    const store = new BuildStore(root);

    await expect(store.prepare(ref('../../etc'))).rejects.toThrow('deploymentId is not a valid id');
    await expect(
      store.find({ projectId: '..', serviceId: 's1', deploymentId: 'd1' }),
    ).rejects.toThrow('projectId is not a valid id');
    await expect(store.removeProject('a/b')).rejects.toThrow('projectId is not a valid id');
    expect(() => new BuildStore('relative/builds')).toThrow('must be absolute');
  });
});

describe("a build's disk (BUILD_DISK_BYTES)", () => {
  const MiB = 1024 ** 2;
  const disks = new BuildDisks(64 * MiB);

  it('holds the workspace and /tmp on a filesystem of its own size: writing past it fails, and the store says it is full', async () => {
    const store = new BuildStore(root, { disks });
    const build = ref(id(1));
    const { dir, workspace, tmp } = await store.prepare(build);
    await mkdir(workspace);

    const big = Buffer.alloc(MiB, 1);
    let written = 0;
    const fill = async (where: string) => {
      for (let i = 0; i < 100; i++) {
        await writeFile(path.join(where, `f${i}`), big);
        written += MiB;
      }
    };
    await expect(fill(workspace)).rejects.toMatchObject({ code: 'ENOSPC' });
    await expect(writeFile(path.join(tmp, 'more'), big)).rejects.toMatchObject({ code: 'ENOSPC' });

    expect(written).toBeLessThan(64 * MiB);
    expect(await store.isFull(build)).toBe(true);
    expect(await mountsUnder(dir)).toEqual([path.join(dir, 'disk')]);
  });

  it('is unmounted and gone with its build, and mounted again for an app after a reboot', async () => {
    const store = new BuildStore(root, { disks, keepPerService: 1 });
    const kept = await succeed(store, ref(id(1)));
    expect(await store.isFull(ref(id(1)))).toBe(false);
    expect(await readdir(path.join(kept.dir, 'disk'))).toEqual(['lost+found', 'workspace']);

    spawnSync('umount', [path.join(kept.dir, 'disk')]); // as a reboot would
    expect(existsSync(path.join(kept.workspace, 'server.js'))).toBe(false);
    await store.open(kept);
    expect(existsSync(path.join(kept.workspace, 'server.js'))).toBe(true);

    await succeed(store, ref(id(2))); // prunes the first
    expect(existsSync(kept.dir)).toBe(false);
    expect(await mountsUnder(kept.dir)).toEqual([]);
    await store.removeService(service);
    expect(await mountsUnder(root)).toEqual([]);
  });
});
