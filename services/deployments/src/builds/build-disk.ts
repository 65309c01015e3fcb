import { chmod, mkdir, rm, statfs, truncate, writeFile } from 'node:fs/promises';
import { mountsUnder, runProgram as run } from '@platform/shared';
import path from 'node:path';

/** Inside a build's directory: the disk's image and where it is mounted. */
const IMAGE = 'disk.img';
const MOUNT = 'disk';
/** Below this much free space, a failed build is said to have filled its disk. */
const FULL_BELOW_BYTES = 1024 * 1024;

/** Where a build writes: its workspace, and the directory bound at its /tmp. */
export interface BuildDiskPaths {
  workspace: string;
  tmp: string;
}

/**
 * Each build's files on a filesystem of a fixed size (BUILD_DISK_BYTES): an ext4 image of that
 * size (sparse: it takes only what is written) mounted at `<dir>/disk`, holding the workspace and
 * the build's /tmp. A build that fills it meets ENOSPC and fails, and the log says so; the host's
 * disk never fills. `bytes: 0` leaves them plain directories (no limit: development only).
 */
export class BuildDisks {
  constructor(readonly bytes: number) {}

  paths(dir: string): BuildDiskPaths {
    return { workspace: path.join(dir, MOUNT, 'workspace'), tmp: path.join(dir, MOUNT, 'tmp') };
  }

  /** Makes the build's disk in its (fresh) directory; the workspace itself is not created. */
  async create(dir: string): Promise<BuildDiskPaths> {
    const mount = path.join(dir, MOUNT);
    await mkdir(mount, { recursive: true });
    if (this.bytes > 0) {
      const image = path.join(dir, IMAGE);
      await writeFile(image, '', { mode: 0o600 });
      await truncate(image, this.bytes);
      // No journal and no reserved blocks: a scratch disk, all of it the build's.
      await run('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', '-m', '0', '--', image]);
      await this.mount(dir);
    }
    const paths = this.paths(dir);
    await mkdir(paths.tmp);
    await chmod(paths.tmp, 0o1777);
    return paths;
  }

  /** Mounts a kept build's disk again where it is not (after a reboot): before an app starts from it. */
  async open(dir: string): Promise<void> {
    if (this.bytes > 0 && (await mountsUnder(path.join(dir, MOUNT))).length === 0) {
      await this.mount(dir);
    }
  }

  /** Whether the build used (nearly) all of its disk. */
  async isFull(dir: string): Promise<boolean> {
    if (this.bytes === 0) return false;
    const stats = await statfs(path.join(dir, MOUNT));
    return stats.bavail * stats.bsize < FULL_BELOW_BYTES;
  }

  /** What the build left in its /tmp is not part of the build. */
  async clearTmp(dir: string): Promise<void> {
    const { tmp } = this.paths(dir);
    await rm(tmp, { recursive: true, force: true });
  }

  private mount(dir: string): Promise<void> {
    return run('mount', [
      '-o',
      'loop,nodev,nosuid',
      '--',
      path.join(dir, IMAGE),
      path.join(dir, MOUNT),
    ]);
  }
}
