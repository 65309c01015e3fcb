import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Where the workspace is inside the sandbox: the only writable place besides a private /tmp. */
export const SANDBOX_WORKSPACE = '/workspace';

/** What one sandboxed process is allowed (each limit applies when given). */
export interface SandboxLimits {
  /** Wall-clock time of `run()`; past it the process tree is stopped (`stoppedBy: 'timeout'`). */
  timeoutMs?: number;
  /** CPU time (RLIMIT_CPU): SIGXCPU at this many seconds, SIGKILL one second later. */
  cpuSeconds?: number;
  /** Address space of each process (RLIMIT_AS). Node needs ~1 GiB of it just to start. */
  memoryBytes?: number;
  /** Processes and threads of the sandbox's user at once (RLIMIT_NPROC). */
  processes?: number;
}

export interface BwrapPlan {
  /** The absolute directory bound read-write at SANDBOX_WORKSPACE. */
  workspace: string;
  /** The working directory inside the workspace (relative). */
  cwd: string;
  env: Record<string, string>;
  network: boolean;
  /** Directories bound read-only at the same path (e.g. node's installation outside /usr). */
  extraReadOnly: string[];
  /** The generated /etc/passwd and /etc/group of the sandbox. */
  passwdFile: string;
  groupFile: string;
  /** Drop to this uid/gid inside (when the platform runs as root); undefined: a user namespace. */
  dropTo?: { uid: number; gid: number; setpriv: string };
  /** The fd bwrap writes `{"child-pid": …}` to. */
  infoFd: number;
}

/** Top-level system directories: merged-/usr symlinks are recreated, real directories bound. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What a shell, node, git and TLS clients read in /etc; nothing else of it is visible. */
const ETC_READ_ONLY = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ssl',
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/localtime',
  '/etc/mime.types',
];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The working directory inside the sandbox; refuses one that leaves the workspace. */
export function sandboxCwd(cwd: string): string {
  const inside = path.posix.normalize(path.posix.join(SANDBOX_WORKSPACE, cwd || '.'));
  if (inside !== SANDBOX_WORKSPACE && !inside.startsWith(`${SANDBOX_WORKSPACE}/`)) {
    throw new Error(`cwd must stay inside the workspace, got ${JSON.stringify(cwd)}`);
  }
  return inside;
}

export function assertEnvNames(env: Record<string, string>): void {
  for (const name of Object.keys(env)) {
    if (!ENV_NAME.test(name))
      throw new Error(`invalid environment variable name ${JSON.stringify(name)}`);
  }
}

function systemDirArgs(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  return args;
}

/** Every rlimit as `prlimit` options; both soft and hard, so the code cannot raise them. */
export function prlimitArgs(limits: SandboxLimits): string[] {
  const args = ['--core=0'];
  if (limits.cpuSeconds !== undefined) {
    const cpu = Math.max(1, Math.ceil(limits.cpuSeconds));
    args.push(`--cpu=${cpu}:${cpu + 1}`);
  }
  if (limits.memoryBytes !== undefined) args.push(`--as=${Math.floor(limits.memoryBytes)}`);
  if (limits.processes !== undefined) args.push(`--nproc=${Math.floor(limits.processes)}`);
  return args;
}

/**
 * bwrap's arguments up to (not including) the command: fresh mount, PID, IPC, UTS and cgroup
 * namespaces (and network when `network` is false), system directories read-only, the workspace
 * read-write, a private /proc, /dev and /tmp, only the given environment.
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  assertEnvNames(plan.env);
  const args = [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--info-fd',
    String(plan.infoFd),
  ];
  if (!plan.dropTo) args.push('--unshare-user');
  if (!plan.network) args.push('--unshare-net');
  args.push('--ro-bind', '/usr', '/usr', ...systemDirArgs());
  // bwrap makes missing parents 0700, which the sandbox's user could not enter.
  args.push('--perms', '0755', '--dir', '/etc');
  for (const file of ETC_READ_ONLY) args.push('--ro-bind-try', file, file);
  args.push('--ro-bind', plan.passwdFile, '/etc/passwd', '--ro-bind', plan.groupFile, '/etc/group');
  for (const dir of plan.extraReadOnly) args.push('--ro-bind', dir, dir);
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--perms', '1777', '--tmpfs', '/tmp', '--perms', '0755', '--tmpfs', '/run');
  args.push('--bind', plan.workspace, SANDBOX_WORKSPACE, '--chdir', sandboxCwd(plan.cwd));
  args.push('--clearenv');
  for (const [name, value] of Object.entries(plan.env)) args.push('--setenv', name, value);
  return args;
}
