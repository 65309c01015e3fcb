import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { bwrapArgs } from './bwrap-args';
import { identityFiles, type SandboxIdentity } from './identity';
import { prlimitArgs, type SandboxLimits } from './limits';
import type { SandboxNetwork } from './network/sandbox-network';
import type { ResourceGroup } from './resource-groups';
import type { Programs } from './sandbox-requirements';

const INFO_FD = 3;
const ARGS_FD = 4;
/** The pipe the child waits on until its cgroup and network are in place. */
export const BLOCK_FD = 5;

/** bwrap writes `{"child-pid": N, …}` on its info fd once the sandbox is made. */
function readChildPid(stream: Readable | null | undefined): Promise<number | undefined> {
  return new Promise((resolve) => {
    if (!stream) return resolve(undefined);
    let text = '';
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      try {
        const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid'];
        if (typeof pid === 'number') resolve(pid);
      } catch {
        // not complete yet
      }
    });
    stream.once('close', () => resolve(undefined));
    stream.once('error', () => resolve(undefined));
  });
}

/** One of the extra pipes a child was spawned with. */
export const pipeOf = (child: ChildProcess, fd: number) =>
  (child.stdio as unknown as (Writable | null | undefined)[])[fd];

/** What one sandbox holds while it runs, freed once it has ended. */
export interface Held {
  identity?: SandboxIdentity;
  network?: SandboxNetwork;
  group?: ResourceGroup;
  files?: string;
}

/** The sandbox's passwd, group and resolv.conf, in a directory only root reads. */
export async function writeSandboxFiles(held: Held): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'platform-sandbox-'));
  await chmod(dir, 0o700);
  const { passwd, group } = identityFiles(held.identity!.uid, held.identity!.gid);
  await writeFile(path.join(dir, 'passwd'), passwd, { mode: 0o644 });
  await writeFile(path.join(dir, 'group'), group, { mode: 0o644 });
  await writeFile(path.join(dir, 'resolv.conf'), held.network?.resolvConf ?? '', { mode: 0o644 });
  return dir;
}

/**
 * Starts bwrap for one sandbox: its arguments on a pipe, the shell's script on stdin, and the
 * child held at `BLOCK_FD` until its cgroup and network are in place.
 */
export function spawnBwrap(
  { programs, nodePrefix, cgroups }: { programs: Programs; nodePrefix?: string; cgroups: boolean },
  options: {
    workspace: string;
    readOnlyWorkspace?: boolean;
    tmpDir?: string;
    limits: SandboxLimits;
  },
  held: Held,
  script: string,
): { child: ChildProcess; childPid: Promise<number | undefined> } {
  const { bwrap, prlimit, setpriv } = programs;
  const { uid, gid } = held.identity!;
  const args = bwrapArgs({
    workspace: options.workspace,
    workspaceReadOnly: options.readOnlyWorkspace ?? false,
    extraReadOnly: nodePrefix ? [nodePrefix] : [],
    passwdFile: path.join(held.files!, 'passwd'),
    groupFile: path.join(held.files!, 'group'),
    resolvConfFile: path.join(held.files!, 'resolv.conf'),
    tmp: options.tmpDir ? { dir: options.tmpDir } : { bytes: options.limits.tmpBytes },
    dropsPrivileges: true,
    infoFd: INFO_FD,
    blockFd: BLOCK_FD,
  });
  const command = [
    setpriv!,
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    prlimit,
    ...prlimitArgs(options.limits, { cgroups }),
    '--',
    '/bin/bash',
    '-s',
  ];
  // bwrap itself gets no environment: its own process is the sandbox's PID 1, whose
  // /proc/1/environ the sandboxed code can read. Its arguments are the platform's own; the
  // tenant's command, variables and directory come on the shell's stdin (launch-script.ts).
  const child = spawn(bwrap, ['--args', String(ARGS_FD), '--', ...command], {
    env: {},
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
  });
  const argsPipe = pipeOf(child, ARGS_FD);
  argsPipe?.on('error', () => undefined);
  argsPipe?.end(args.map((arg) => `${arg}\0`).join(''));
  pipeOf(child, BLOCK_FD)?.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(script);
  return { child, childPid: readChildPid(child.stdio[INFO_FD] as Readable | null) };
}
