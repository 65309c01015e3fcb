import { randomInt } from 'node:crypto';
import { runProgram } from '@platform/shared';

const UID_POOL_SIZE = 65_536;

/**
 * Hands the workspace to the sandbox's uid. GNU `chown -R` walks the tree by file descriptor and
 * never follows a symbolic link (-P, the default), so a link left in a workspace cannot make it
 * change a file outside.
 */
function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  return runProgram('chown', ['-R', '-P', `${uid}:${gid}`, '--', dir]);
}

/** A uid/gid of the pool, held by one running sandbox. */
export interface SandboxIdentity {
  uid: number;
  gid: number;
  release(): void;
}

/**
 * The uids sandboxes run as when the platform is root: `base` … `base + 65535`, one per running
 * sandbox of this process, starting at a random place so that several processes of the platform
 * on one host (jest workers, replicas) rarely hand out the same one at once.
 */
export class IdentityPool {
  private readonly used = new Set<number>();
  private readonly start = randomInt(UID_POOL_SIZE);

  constructor(private readonly base: number) {}

  /** A free uid, the workspace handed to it (unless null: an app reads its build, root's). */
  async take(workspace: string | null): Promise<SandboxIdentity> {
    let uid: number | undefined;
    for (let i = 0; i < UID_POOL_SIZE && uid === undefined; i++) {
      const candidate = this.base + ((this.start + i) % UID_POOL_SIZE);
      if (!this.used.has(candidate)) uid = candidate;
    }
    if (uid === undefined) throw new Error(`all ${UID_POOL_SIZE} sandbox uids are in use`);
    this.used.add(uid);
    try {
      if (workspace !== null) await chownTree(workspace, uid, uid);
    } catch (err) {
      this.used.delete(uid);
      throw err;
    }
    return { uid, gid: uid, release: () => this.used.delete(uid) };
  }
}

/** The sandbox's /etc/passwd and /etc/group: root, its own user, nobody. */
export function identityFiles(uid: number, gid: number): { passwd: string; group: string } {
  return {
    passwd:
      'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
      `sandbox:x:${uid}:${gid}:sandbox:/workspace:/bin/sh\n` +
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    group: `root:x:0:\nsandbox:x:${gid}:\nnogroup:x:65534:\n`,
  };
}
