import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SANDBOX_WORKSPACE } from './bwrap-args';
import { IdentityPool } from './identity';
import { launchScript, sandboxCwd } from './launch-script';
import { SandboxNetworks } from './network/sandbox-network';
import {
  supervise,
  type LimitName,
  type SandboxedProcess,
  type SandboxResult,
} from './process-tree';
import type { ResourceGroups } from './resource-groups';
import type { SandboxLimits } from './limits';
import {
  REMEDY,
  requireSandboxTools,
  SandboxUnavailableError,
  type Programs,
} from './sandbox-requirements';
import type { SandboxOptions } from './sandbox.options';
import { BLOCK_FD, pipeOf, spawnBwrap, writeSandboxFiles, type Held } from './spawn-bwrap';

export { SANDBOX_WORKSPACE } from './bwrap-args';
export type { SandboxLimits } from './limits';
export type { SandboxOptions, SandboxMode } from './sandbox.options';
export { sandboxOptions } from './sandbox.options';
export type { SandboxResult, SandboxedProcess, LimitName } from './process-tree';
export { SandboxUnavailableError } from './sandbox-requirements';

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

const PROBE_TIMEOUT_MS = 15_000;

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

    const { programs, found, groups } = await requireSandboxTools(options);
    const sandbox = new Sandbox(
      options,
      programs,
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
      held.files = await writeSandboxFiles(held);
    } catch (err) {
      await release();
      throw err;
    }
    const { child, childPid } = spawnBwrap(
      { programs: this.programs, nodePrefix: this.nodePrefix, cgroups: this.groups !== null },
      options,
      held,
      script,
    );
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
