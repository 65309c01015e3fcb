import { z } from 'zod';
import { booleanEnv } from '@platform/shared';

/**
 * The sandbox's settings, read by the deployments service (builds) and by the local runtime's
 * supervisor (apps) alike (README.md "The sandbox").
 */
export const sandboxEnv = z.object({
  /**
   * How tenants' builds and apps are isolated: `bubblewrap` (bwrap namespaces plus rlimits), or
   * `none`: plain child processes, for a development machine without a working bwrap; it needs
   * ALLOW_UNSANDBOXED=true and is refused when NODE_ENV=production.
   */
  SANDBOX: z.enum(['bubblewrap', 'none']).default('bubblewrap'),
  /** true: SANDBOX=none is allowed (development only). */
  ALLOW_UNSANDBOXED: booleanEnv(false),
  /** The bubblewrap program: a name looked up in PATH, or an absolute path. */
  SANDBOX_BWRAP: z.string().min(1).default('bwrap'),
  /**
   * When the platform runs as root, each sandboxed process runs as its own uid and gid, taken
   * from SANDBOX_UID_BASE … SANDBOX_UID_BASE + 65535: ids no user or /etc/subuid range of the
   * machine may use (the default is far above what useradd and subuid hand out).
   */
  SANDBOX_UID_BASE: z.coerce
    .number()
    .int()
    .min(1000)
    .max(2 ** 31 - 65_536)
    .default(2_000_000_000),
});

/**
 * A sandboxed process's address space limit in bytes (RLIMIT_AS). It counts reserved address
 * space, not memory in use: node needs ~1 GiB of it to start, and each WebAssembly instance (Node's
 * own `fetch` parses HTTP with one) reserves ~10 GiB, so the defaults are 16 GiB. Without cgroups
 * (not available here) this is a coarse bound; README.md "The sandbox".
 */
export const memoryLimitEnv = (defaultBytes: number) =>
  z.coerce
    .number()
    .int()
    .min(64 * 1024 * 1024)
    .default(defaultBytes);

/** Processes and threads one sandbox may run at once (RLIMIT_NPROC). */
export const processLimitEnv = (defaultCount: number) =>
  z.coerce.number().int().min(8).default(defaultCount);
