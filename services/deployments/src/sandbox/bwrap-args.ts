import { lstatSync, readlinkSync } from 'node:fs';

/** Where the workspace is inside the sandbox: a build's writes there; an app's is read-only. */
export const SANDBOX_WORKSPACE = '/workspace';

export interface BwrapPlan {
  /** The absolute directory bound at SANDBOX_WORKSPACE: read-write, or read-only (an app's build). */
  workspace: string;
  workspaceReadOnly: boolean;
  /** Directories bound read-only at the same path (e.g. node's installation outside /usr). */
  extraReadOnly: string[];
  /** The generated /etc/passwd, /etc/group and /etc/resolv.conf of the sandbox. */
  passwdFile: string;
  groupFile: string;
  resolvConfFile: string;
  /** The sandbox's /tmp: a tmpfs of `bytes`, or a host directory bound read-write. */
  tmp: { bytes: number } | { dir: string };
  /** true when bwrap runs as root and a program inside drops to a sandbox uid; else a user namespace. */
  dropsPrivileges: boolean;
  /** The fd bwrap writes `{"child-pid": …}` to. */
  infoFd: number;
  /** The fd the sandbox waits on before running anything: its network and groups come first. */
  blockFd: number;
}

/** Top-level system directories: merged-/usr symlinks are recreated, real directories bound. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What a shell, node, git and TLS clients read in /etc; nothing else of it is visible. */
const ETC_READ_ONLY = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ssl',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/localtime',
  '/etc/mime.types',
];

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

/**
 * bwrap's arguments up to (not including) the command: fresh mount, PID, IPC, UTS, cgroup and
 * network namespaces, system directories read-only, the workspace (read-write or not), a private /proc,
 * /dev, a size-limited /tmp, no environment. Every value here is the platform's own: what a
 * tenant wrote (command, variables, directory) reaches the sandbox on its stdin (launch-script.ts).
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--info-fd',
    String(plan.infoFd),
    '--block-fd',
    String(plan.blockFd),
  ];
  if (!plan.dropsPrivileges) args.push('--unshare-user');
  args.push('--ro-bind', '/usr', '/usr', ...systemDirArgs());
  // bwrap makes missing parents 0700, which the sandbox's user could not enter.
  args.push('--perms', '0755', '--dir', '/etc');
  for (const file of ETC_READ_ONLY) args.push('--ro-bind-try', file, file);
  args.push('--ro-bind', plan.passwdFile, '/etc/passwd', '--ro-bind', plan.groupFile, '/etc/group');
  args.push('--ro-bind', plan.resolvConfFile, '/etc/resolv.conf');
  for (const dir of plan.extraReadOnly) args.push('--ro-bind', dir, dir);
  args.push('--proc', '/proc', '--dev', '/dev');
  if ('dir' in plan.tmp) args.push('--bind', plan.tmp.dir, '/tmp');
  else
    args.push('--perms', '1777', '--size', String(Math.floor(plan.tmp.bytes)), '--tmpfs', '/tmp');
  args.push('--perms', '0755', '--tmpfs', '/run');
  const bind = plan.workspaceReadOnly ? '--ro-bind' : '--bind';
  args.push(bind, plan.workspace, SANDBOX_WORKSPACE, '--chdir', SANDBOX_WORKSPACE);
  args.push('--clearenv');
  return args;
}
