import { spawn, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { bwrapArgs, SANDBOX_WORKSPACE } from './bwrap-args';
import { identityFiles, IdentityPool, type SandboxIdentity } from './identity';
import { launchScript, sandboxCwd } from './launch-script';
import { installEgressRules } from './network/egress-rules';
import { SandboxNetworks, type SandboxNetwork } from './network/sandbox-network';
import {
  supervise,
  type LimitName,
  type SandboxedProcess,
  type SandboxResult,
} from './process-tree';
import { findProgram, findSystemProgram } from './programs';
import { detectResourceGroups, type ResourceGroup, type ResourceGroups } from './resource-groups';
import { prlimitArgs, type SandboxLimits } from './limits';
import type { SandboxOptions } from './sandbox.options';

export { SANDBOX_WORKSPACE } from './bwrap-args';
export type { SandboxLimits } from './limits';
export type { SandboxOptions, SandboxMode } from './sandbox.options';
export { sandboxOptions } from './sandbox.options';
export type { SandboxResult, SandboxedProcess, LimitName } from './process-tree';

export interface SandboxRunOptions {
  /** Absolute directory on the host, bound at `/workspace`: read-write, handed to the sandbox's uid. */
  workspace: string;
  /**
   * Bound read-only and never handed over (an app on its kept build, root's and readable by all):
   * the sandbox writes only to its /tmp. Not enforced with SANDBOX=none.
   */
  readOnlyWorkspace?: boolean;
  /** Working directory relative to the workspace (default: its root). */
  cwd?: string;
  /** A shell command line, run with `sh -c`. */
  command: string;
  /** The process's whole environment: nothing else is passed in. */
  env: Record<string, string>;
  limits: SandboxLimits;
  /**
   * true: a way out to public addresses (README "The sandbox", Network), and the sandbox is
   * reached from the host at its own address. false: a loopback only.
   */
  network: boolean;
  /** stdout and stderr, interleaved in the order they were written, as UTF-8 text. */
  onOutput: (chunk: string) => void;
  /** Aborting it stops the process tree (`stoppedBy: 'cancel'`). */
  signal?: AbortSignal;
  /**
   * A host directory bound at /tmp (a build's, on its disk of a fixed size) instead of a tmpfs of
   * `limits.tmpBytes`.
   */
  tmpDir?: string;
}

/** Thrown by `Sandbox.create` when code cannot be run safely here; the message says what to do. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

const INFO_FD = 3;
const ARGS_FD = 4;
const BLOCK_FD = 5;
const PROBE_TIMEOUT_MS = 15_000;
const REMEDY =
  'install bubblewrap (scripts/infra/bubblewrap.sh, run by npm test and npm start) and run the ' +
  'platform as root where it can make namespaces, network interfaces (CAP_NET_ADMIN) and cgroups, ' +
  'or, on a development machine only, set SANDBOX=none and ALLOW_UNSANDBOXED=true to run code ' +
  'without a sandbox';

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
const pipeOf = (child: ChildProcess, fd: number) =>
  (child.stdio as unknown as (Writable | null | undefined)[])[fd];

interface Programs {
  bwrap: string;
  prlimit: string;
  setpriv?: string;
}

/** What one sandbox holds while it runs, freed once it has ended. */
interface Held {
  identity?: SandboxIdentity;
  network?: SandboxNetwork;
  group?: ResourceGroup;
  files?: string;
}

/**
 * Runs tenants' build steps and apps: without the platform's environment, files, processes or
 * network, within memory, CPU, process-count, disk and time limits. README.md "The sandbox".
 */
export class Sandbox {
  private constructor(
    private readonly options: SandboxOptions,
    private readonly programs: Programs | undefined,
    private readonly identities: IdentityPool | undefined,
    private readonly networks: SandboxNetworks | undefined,
    private readonly groups: ResourceGroups | null,
    /** Read-only extra bind: node's installation when it is not under /usr. */
    private readonly nodePrefix: string | undefined,
  ) {}

  /** Whether code runs isolated (false only with SANDBOX=none). */
  get isolated(): boolean {
    return this.options.mode === 'bubblewrap';
  }

  /** The cgroup version that limits each sandbox, or null (development without cgroups). */
  get resourceGroups(): 'v1' | 'v2' | null {
    return this.groups?.version ?? null;
  }

  /** A PATH for sandboxed processes: node's directory, then the system's. */
  get defaultPath(): string {
    const nodeDir = path.dirname(realpathSync(process.execPath));
    return [...new Set([nodeDir, '/usr/local/bin', '/usr/bin', '/bin'])].join(':');
  }

  /**
   * Makes a sandbox from the settings, after checking that it works here: bwrap, the network
   * tools, the egress rules and cgroups are in place, and a command actually runs. Throws
   * SandboxUnavailableError otherwise.
   */
  static async create(options: SandboxOptions): Promise<Sandbox> {
    const nodeBin = realpathSync(process.execPath);
    const nodePrefix = nodeBin.startsWith('/usr/')
      ? undefined
      : path.dirname(path.dirname(nodeBin));

    if (options.mode === 'none') {
      if (!options.allowUnsandboxed || options.nodeEnv === 'production') {
        throw new SandboxUnavailableError(
          'SANDBOX=none runs tenants\u2019 code without isolation: it needs ALLOW_UNSANDBOXED=true and is ' +
            'refused when NODE_ENV=production',
        );
      }
      return new Sandbox(options, undefined, undefined, undefined, null, nodePrefix);
    }

    const unavailable = (why: string) =>
      new SandboxUnavailableError(`no sandbox: ${why}; ${REMEDY}`);
    const bwrap = findProgram(options.bwrap);
    if (!bwrap)
      throw unavailable(`the bubblewrap program ${JSON.stringify(options.bwrap)} was not found`);
    if (process.getuid?.() !== 0) {
      throw unavailable(
        'the platform is not root, so it cannot give each sandbox a network of its own',
      );
    }
    const found = Object.fromEntries(
      ['prlimit', 'setpriv', 'ip', 'nsenter', 'nft'].map((name) => [name, findSystemProgram(name)]),
    );
    const missing = Object.keys(found).filter((name) => !found[name]);
    if (missing.length > 0) {
      throw unavailable(`${missing.join(', ')} not found (util-linux, iproute2, nftables)`);
    }
    const groups = detectResourceGroups(options.cgroupRoot);
    if (!groups && options.nodeEnv === 'production') {
      throw unavailable(
        'no cgroup (v1 or v2) with the memory, cpu and pids controllers is writable',
      );
    }
    try {
      await installEgressRules({ nft: found.nft!, ip: found.ip! }, options.egress);
    } catch (err) {
      throw unavailable(`the egress rules could not be installed: ${(err as Error).message}`);
    }
    const sandbox = new Sandbox(
      options,
      { bwrap, prlimit: found.prlimit!, setpriv: found.setpriv! },
      new IdentityPool(options.uidBase),
      new SandboxNetworks({
        ip: found.ip!,
        nsenter: found.nsenter!,
        cidr: options.egress.sandboxCidr,
        interfacePrefix: options.egress.interfacePrefix,
        dnsUpstream: options.dnsUpstream,
        nft: found.nft!,
        egress: options.egress,
      }),
      groups,
      nodePrefix,
    );
    await sandbox.probe();
    return sandbox;
  }

  /** Runs a command to its end (a build step). Its output is delivered before this settles. */
  async run(options: SandboxRunOptions): Promise<SandboxResult> {
    return (await this.start(options)).exited;
  }

  /** Starts a long-running command (an app); `limits.timeoutMs`, if given, still applies. */
  async start(options: SandboxRunOptions): Promise<SandboxedProcess> {
    if (!path.isAbsolute(options.workspace)) throw new Error('workspace must be an absolute path');
    const cwd = sandboxCwd(options.cwd ?? '.');
    if (!this.programs) return this.startUnsandboxed(options, cwd);

    const script = launchScript({ command: options.command, directory: cwd, env: options.env });
    const held: Held = {};
    const release = async () => {
      await held.network?.close();
      await held.group?.remove();
      held.identity?.release();
      if (held.files) await rm(held.files, { recursive: true, force: true });
    };
    try {
      held.identity = await this.identities!.take(
        options.readOnlyWorkspace ? null : options.workspace,
      );
      if (options.network) held.network = await this.networks!.create();
      held.group = await this.groups?.create(this.groupLimits(options.limits));
      held.files = await this.writeFiles(held);
    } catch (err) {
      await release();
      throw err;
    }
    const { child, childPid } = this.spawnBwrap(options, held, script);
    const ready = childPid.then(async (pid) => {
      if (pid === undefined) return undefined;
      try {
        await held.group?.attach(pid);
        await held.network?.enter(pid);
        pipeOf(child, BLOCK_FD)?.end('go');
      } catch (err) {
        options.onOutput(`==> the sandbox could not be set up: ${(err as Error).message}\n`);
        child.kill('SIGKILL');
      }
      return pid;
    });
    const handle = await supervise({
      child,
      childPid: ready,
      isolated: true,
      address: held.network?.addresses.sandbox ?? '127.0.0.1',
      graceMs: this.options.killGraceMs,
      timeoutMs: options.limits.timeoutMs,
      signal: options.signal,
      onOutput: options.onOutput,
      limitHit: async () => {
        const hit = await held.group?.limitsHit();
        return hit?.memory ? 'memory' : hit?.processes ? ('processes' as LimitName) : undefined;
      },
      release,
    });
    // Started means reachable: its network is up before anyone is told where it is.
    await ready;
    return handle;
  }

  /** Removes what the sandbox made for itself (nothing lasting: each run frees its own). */
  async close(): Promise<void> {}

  private groupLimits(limits: SandboxLimits) {
    return { memoryBytes: limits.memoryBytes, cpus: limits.cpus, processes: limits.processes };
  }

  /** The sandbox's passwd, group and resolv.conf, in a directory only root reads. */
  private async writeFiles(held: Held): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'platform-sandbox-'));
    await chmod(dir, 0o700);
    const { passwd, group } = identityFiles(held.identity!.uid, held.identity!.gid);
    await writeFile(path.join(dir, 'passwd'), passwd, { mode: 0o644 });
    await writeFile(path.join(dir, 'group'), group, { mode: 0o644 });
    await writeFile(path.join(dir, 'resolv.conf'), held.network?.resolvConf ?? '', { mode: 0o644 });
    return dir;
  }

  private spawnBwrap(
    options: SandboxRunOptions,
    held: Held,
    script: string,
  ): { child: ChildProcess; childPid: Promise<number | undefined> } {
    const { bwrap, prlimit, setpriv } = this.programs!;
    const { uid, gid } = held.identity!;
    const args = bwrapArgs({
      workspace: options.workspace,
      workspaceReadOnly: options.readOnlyWorkspace ?? false,
      extraReadOnly: this.nodePrefix ? [this.nodePrefix] : [],
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
      ...prlimitArgs(options.limits, { cgroups: this.groups !== null }),
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

  private startUnsandboxed(options: SandboxRunOptions, cwd: string): Promise<SandboxedProcess> {
    const directory = path.join(options.workspace, path.relative(SANDBOX_WORKSPACE, cwd));
    const script = launchScript({ command: options.command, directory, env: options.env });
    const child = spawn('/bin/bash', ['-s'], {
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(script);
    return supervise({
      child,
      childPid: Promise.resolve(undefined),
      isolated: false,
      address: '127.0.0.1',
      graceMs: this.options.killGraceMs,
      timeoutMs: options.limits.timeoutMs,
      signal: options.signal,
      onOutput: options.onOutput,
      limitHit: async () => undefined,
      release: async () => undefined,
    });
  }

  private async probe(): Promise<void> {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'platform-sandbox-probe-'));
    let output = '';
    try {
      const result = await this.run({
        workspace,
        command: 'echo sandbox-ok',
        env: { PATH: '/usr/bin:/bin' },
        limits: {
          timeoutMs: PROBE_TIMEOUT_MS,
          processes: 64,
          memoryBytes: 256 * 1024 ** 2,
          cpus: 1,
          tmpBytes: 1024 ** 2,
        },
        network: true,
        onOutput: (chunk) => (output += chunk),
      });
      if (result.exitCode !== 0 || !output.includes('sandbox-ok')) {
        throw new SandboxUnavailableError(
          `no sandbox: ${this.programs?.bwrap} cannot make a sandbox here (exit code ${result.exitCode}` +
            `${result.stoppedBy ? `, ${result.stoppedBy}` : ''}): ${output.trim().slice(0, 500) || 'no output'}; ${REMEDY}`,
        );
      }
    } catch (err) {
      if (err instanceof SandboxUnavailableError) throw err;
      throw new SandboxUnavailableError(
        `no sandbox: ${this.programs?.bwrap} failed to start: ${(err as Error).message}; ${REMEDY}`,
      );
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
}
