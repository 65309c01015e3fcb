import { randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:net';
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
 * Claims `uid` for this process across every process of the host: a listening socket in the
 * abstract namespace named for it. The kernel lets one socket at a time hold a name and frees it
 * when the socket closes or its process dies, so no two processes of the platform (the pipeline
 * and the runtime supervisor, jest workers, replicas on one host) hold one uid at once, and a
 * crashed one leaves nothing to clean up. Resolves with the socket, or null when the uid is held.
 */
function claimUid(uid: number): Promise<Server | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' ? resolve(null) : reject(err),
    );
    server.listen(`\0${UID_CLAIM_PREFIX}${uid}`, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** The abstract socket name (after its NUL) that holds a sandbox uid. */
export const UID_CLAIM_PREFIX = 'platform-sandbox-uid-';

/**
 * The uids sandboxes run as when the platform is root: `base` … `base + 65535`, one per running
 * sandbox on the host. Each process starts looking at a random place, so claims rarely collide;
 * when they do, the kernel decides (`claimUid`).
 */
export class IdentityPool {
  constructor(
    private readonly base: number,
    private readonly start = randomInt(UID_POOL_SIZE),
  ) {}

  /**
   * A uid no other sandbox on the host holds, the workspace handed to it (unless null: an app
   * reads its build, root's).
   */
  async take(workspace: string | null): Promise<SandboxIdentity> {
    for (let i = 0; i < UID_POOL_SIZE; i++) {
      const uid = this.base + ((this.start + i) % UID_POOL_SIZE);
      const claim = await claimUid(uid);
      if (!claim) continue;
      try {
        if (workspace !== null) await chownTree(workspace, uid, uid);
      } catch (err) {
        claim.close();
        throw err;
      }
      return { uid, gid: uid, release: () => claim.close() };
    }
    throw new Error(`all ${UID_POOL_SIZE} sandbox uids are in use`);
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
