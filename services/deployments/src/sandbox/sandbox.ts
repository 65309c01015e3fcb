import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import {
  accessSync,
  constants,
  mkdtempSync,
  chmodSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable, Writable } from 'node:stream';
import {
  bwrapArgs,
  prlimitArgs,
  sandboxCwd,
  assertEnvNames,
  type SandboxLimits,
} from './bwrap-args';
import type { Config } from '../config';
import { pidNamespaceOf, processesIn, signalProcess } from './namespace-processes';

export { SANDBOX_WORKSPACE, type SandboxLimits } from './bwrap-args';

/**
 * How tenants' code is run. `bubblewrap`: in a bwrap sandbox (the default, and the only choice
 * in production). `none`: as a plain child process, for development machines without a working
 * bwrap, and only when `allowUnsandboxed` says so.
 */
export type SandboxMode = 'bubblewrap' | 'none';

export interface SandboxOptions {
  mode: SandboxMode;
  /** Must be true for `mode: 'none'` (ALLOW_UNSANDBOXED). */
  allowUnsandboxed: boolean;
  nodeEnv: 'development' | 'test' | 'production';
  /** The bwrap program: a name looked up in PATH, or an absolute path (SANDBOX_BWRAP). */
  bwrap: string;
  /**
   * When the platform runs as root, each sandboxed process runs as its own uid/gid, taken from
   * `uidBase` … `uidBase + 65535` (SANDBOX_UID_BASE), so the process limit of one sandbox is not
   * shared with another.
   */
  uidBase: number;
  /** After SIGTERM, how long a stopped process tree gets before SIGKILL. */
  killGraceMs: number;
}

export interface SandboxRunOptions {
  /** Absolute directory on the host, bound read-write at `/workspace`: the only writable place. */
  workspace: string;
  /** Working directory relative to the workspace (default: its root). */
  cwd?: string;
  /** A shell command line, run with `sh -c`. */
  command: string;
  /** The process's whole environment: nothing else is passed in. */
  env: Record<string, string>;
  limits: SandboxLimits;
  /** true: the host's network (builds fetch packages; apps listen on PORT). false: loopback only. */
  network: boolean;
  /** stdout and stderr, interleaved in the order they were written, as UTF-8 text. */
  onOutput: (chunk: string) => void;
  /** Aborting it stops the process tree (`stoppedBy: 'cancel'`). */
  signal?: AbortSignal;
}

export interface SandboxResult {
  /** Never 0 when stopped; 128 + n for a process killed by signal n (as shells report it). */
  exitCode: number;
  signal: NodeJS.Signals | null;
  /** Why the platform or the kernel stopped it, when it did not end on its own. */
  stoppedBy?: 'timeout' | 'cancel' | 'limit';
}

/** A long-running sandboxed process (an app). */
export interface SandboxedProcess {
  /** Host pid of the outermost process (bwrap, or `sh` without a sandbox). */
  pid: number;
  /** Settles when the process tree has ended and its output has been delivered. */
  exited: Promise<SandboxResult>;
  /** Stops the whole tree: SIGTERM, SIGKILL after the grace period (`stoppedBy: 'cancel'`). */
  stop(): Promise<SandboxResult>;
}

/** Thrown by `Sandbox.create` when code cannot be run safely here; the message says what to do. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

const UID_POOL_SIZE = 65_536;
const INFO_FD = 3;
const ARGS_FD = 4;
const OUTPUT_DRAIN_MS = 1_000;
const PROBE_TIMEOUT_MS = 15_000;
const REMEDY =
  'install bubblewrap (scripts/infra/bubblewrap.sh, run by npm test and npm start) where it can ' +
  'make namespaces, or, on a development machine only, set SANDBOX=none and ' +
  'ALLOW_UNSANDBOXED=true to run code without a sandbox';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Looks a program up the way a shell does; undefined when it is nowhere. */
function findProgram(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : [...searchPath.split(':').filter(Boolean), '/usr/bin', '/usr/sbin', '/bin', '/sbin'].map(
        (dir) => path.join(dir, name),
      );
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A program the sandbox runs inside itself must live under /usr, which is bound read-only. */
function findSystemProgram(name: string): string | undefined {
  for (const dir of ['/usr/bin', '/usr/sbin']) {
    const found = findProgram(path.join(dir, name));
    if (found) return found;
  }
  return undefined;
}

/** A directory for the files the sandbox binds (its passwd and group), readable by its users. */
function makeSupportDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-sandbox-'));
  chmodSync(dir, 0o755);
  return dir;
}

function signalName(code: number): NodeJS.Signals | null {
  const number = code - 128;
  if (number <= 0 || number > 64) return null;
  const entry = Object.entries(os.constants.signals).find(([, n]) => n === number);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}

/**
 * Hands the workspace to the sandbox's uid. GNU `chown -R` walks the tree by file descriptor and
 * never follows a symbolic link (-P, the default), so a link left in a workspace cannot make it
 * change a file outside.
 */
function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let errors = '';
    const child = spawn('/usr/bin/env', ['chown', '-R', '-P', `${uid}:${gid}`, '--', dir], {
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`chown of the workspace failed: ${errors.trim()}`)),
    );
  });
}

function readInto(stream: Readable, onOutput: (text: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (text) onOutput(text);
    });
    stream.once('close', () => {
      const rest = decoder.end();
      if (rest) onOutput(rest);
      resolve();
    });
    stream.once('error', () => resolve());
  });
}

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

/**
 * Runs tenants' build steps and apps: without the platform's environment, files or processes,
 * within CPU, memory, process-count and time limits. See README.md, "The sandbox".
 */
export class Sandbox {
  private readonly usedUids = new Set<number>();
  /**
   * Where this instance starts looking for a free uid: random, so that several processes of the
   * platform on one host (jest workers, replicas) are unlikely to hand out the same uid at once.
   */
  private readonly uidStart = randomInt(UID_POOL_SIZE);

  private constructor(
    private readonly options: SandboxOptions,
    private readonly programs: { bwrap?: string; prlimit?: string; setpriv?: string },
    private readonly supportDir: string,
    /** Read-only extra bind: node's installation when it is not under /usr. */
    private readonly nodePrefix: string | undefined,
  ) {}

  /** Whether code runs isolated (false only with SANDBOX=none). */
  get isolated(): boolean {
    return this.options.mode === 'bubblewrap';
  }

  /** A PATH for sandboxed processes: node's directory, then the system's. */
  get defaultPath(): string {
    const nodeDir = path.dirname(realpathSync(process.execPath));
    return [...new Set([nodeDir, '/usr/local/bin', '/usr/bin', '/bin'])].join(':');
  }

  /**
   * Makes a sandbox from the settings, after checking that it works here: bwrap is found and
   * actually runs a command in fresh namespaces. Throws SandboxUnavailableError otherwise.
   */
  static async create(options: SandboxOptions): Promise<Sandbox> {
    const prlimit = findSystemProgram('prlimit');
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
      return new Sandbox(options, { prlimit }, makeSupportDir(), nodePrefix);
    }

    const bwrap = findProgram(options.bwrap);
    if (!bwrap) {
      throw new SandboxUnavailableError(
        `no sandbox: the bubblewrap program ${JSON.stringify(options.bwrap)} was not found; ${REMEDY}`,
      );
    }
    if (!prlimit) {
      throw new SandboxUnavailableError(
        `no sandbox: prlimit (util-linux) was not found in /usr/bin; ${REMEDY}`,
      );
    }
    const asRoot = process.getuid?.() === 0;
    const setpriv = asRoot ? findSystemProgram('setpriv') : undefined;
    if (asRoot && !setpriv) {
      throw new SandboxUnavailableError(
        `no sandbox: setpriv (util-linux) was not found in /usr/bin, and the platform runs as root; ${REMEDY}`,
      );
    }
    const sandbox = new Sandbox(options, { bwrap, prlimit, setpriv }, makeSupportDir(), nodePrefix);
    try {
      await sandbox.probe();
    } catch (err) {
      await sandbox.close();
      throw err;
    }
    return sandbox;
  }

  /** Runs a command to its end (a build step). Its output is delivered before this settles. */
  async run(options: SandboxRunOptions): Promise<SandboxResult> {
    return (await this.start(options)).exited;
  }

  /** Starts a long-running command (an app); `limits.timeoutMs`, if given, still applies. */
  async start(options: SandboxRunOptions): Promise<SandboxedProcess> {
    assertEnvNames(options.env);
    const cwd = sandboxCwd(options.cwd ?? '.');
    if (!path.isAbsolute(options.workspace)) throw new Error('workspace must be an absolute path');
    const identity = await this.takeIdentity(options.workspace);
    const child = this.isolated
      ? this.spawnSandboxed(options, identity)
      : this.spawnUnsandboxed(
          options,
          path.join(options.workspace, path.relative('/workspace', cwd)),
        );
    return this.supervise(child, options, () => identity && this.usedUids.delete(identity.uid));
  }

  /** Removes the files the sandbox made for itself. */
  async close(): Promise<void> {
    await rm(this.supportDir, { recursive: true, force: true });
  }

  private async probe(): Promise<void> {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'platform-sandbox-probe-'));
    let output = '';
    try {
      const result = await this.run({
        workspace,
        command: 'echo sandbox-ok',
        env: { PATH: '/usr/bin:/bin' },
        limits: { timeoutMs: PROBE_TIMEOUT_MS, processes: 64 },
        network: false,
        onOutput: (chunk) => (output += chunk),
      });
      if (result.exitCode !== 0 || !output.includes('sandbox-ok')) {
        throw new SandboxUnavailableError(
          `no sandbox: ${this.programs.bwrap} cannot make a sandbox here (exit code ${result.exitCode}` +
            `${result.stoppedBy ? `, ${result.stoppedBy}` : ''}): ${output.trim().slice(0, 500) || 'no output'}; ${REMEDY}`,
        );
      }
    } catch (err) {
      if (err instanceof SandboxUnavailableError) throw err;
      throw new SandboxUnavailableError(
        `no sandbox: ${this.programs.bwrap} failed to start: ${(err as Error).message}; ${REMEDY}`,
      );
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }

  /** As root: a free uid of the pool (the workspace handed to it); otherwise our own. */
  private async takeIdentity(workspace: string): Promise<{ uid: number; gid: number } | undefined> {
    if (!this.isolated || !this.programs.setpriv) return undefined;
    let uid: number | undefined;
    for (let i = 0; i < UID_POOL_SIZE && uid === undefined; i++) {
      const candidate = this.options.uidBase + ((this.uidStart + i) % UID_POOL_SIZE);
      if (!this.usedUids.has(candidate)) uid = candidate;
    }
    if (uid === undefined) throw new Error(`all ${UID_POOL_SIZE} sandbox uids are in use`);
    this.usedUids.add(uid);
    try {
      await chownTree(workspace, uid, uid);
    } catch (err) {
      this.usedUids.delete(uid);
      throw err;
    }
    return { uid, gid: uid };
  }

  private identityFiles(uid: number, gid: number): { passwd: string; group: string } {
    const passwd = path.join(this.supportDir, `passwd-${uid}`);
    const group = path.join(this.supportDir, `group-${gid}`);
    writeFileSync(
      passwd,
      'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
        `sandbox:x:${uid}:${gid}:sandbox:/workspace:/bin/sh\n` +
        'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
      { mode: 0o644 },
    );
    writeFileSync(group, `root:x:0:\nsandbox:x:${gid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
    return { passwd, group };
  }

  private spawnSandboxed(
    options: SandboxRunOptions,
    identity: { uid: number; gid: number } | undefined,
  ): { child: ChildProcess; childPid: Promise<number | undefined> } {
    const { bwrap, prlimit, setpriv } = this.programs;
    const uid = identity?.uid ?? process.getuid?.() ?? 65534;
    const gid = identity?.gid ?? process.getgid?.() ?? 65534;
    const files = this.identityFiles(uid, gid);
    const args = bwrapArgs({
      workspace: options.workspace,
      cwd: options.cwd ?? '.',
      env: options.env,
      network: options.network,
      extraReadOnly: this.nodePrefix ? [this.nodePrefix] : [],
      passwdFile: files.passwd,
      groupFile: files.group,
      dropTo: identity && setpriv ? { ...identity, setpriv } : undefined,
      infoFd: INFO_FD,
    });
    const drop =
      identity && setpriv
        ? [
            setpriv,
            `--reuid=${uid}`,
            `--regid=${gid}`,
            '--clear-groups',
            '--inh-caps=-all',
            '--bounding-set=-all',
            '--',
          ]
        : [];
    const command = [
      ...drop,
      prlimit!,
      ...prlimitArgs(options.limits),
      '--',
      '/bin/sh',
      '-c',
      `exec 2>&1\n${options.command}`,
    ];
    // bwrap itself gets no environment: its own process is the sandbox's PID 1, whose
    // /proc/1/environ the sandboxed code can read. Its arguments (the variables' values among
    // them) come through a pipe, so they are not on a command line every host user can read.
    const child = spawn(bwrap!, ['--args', String(ARGS_FD), '--', ...command], {
      env: {},
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    const argsPipe = child.stdio[ARGS_FD] as Writable | null;
    argsPipe?.on('error', () => undefined);
    argsPipe?.end(args.map((arg) => `${arg}\0`).join(''));
    return { child, childPid: readChildPid(child.stdio[INFO_FD] as Readable | null) };
  }

  private spawnUnsandboxed(
    options: SandboxRunOptions,
    cwd: string,
  ): { child: ChildProcess; childPid: Promise<number | undefined> } {
    const script = `exec 2>&1\n${options.command}`;
    const [file, args] = this.programs.prlimit
      ? [this.programs.prlimit, [...prlimitArgs(options.limits), '--', '/bin/sh', '-c', script]]
      : ['/bin/sh', ['-c', script]];
    const child = spawn(file, args, {
      cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { child, childPid: Promise.resolve(undefined) };
  }

  private supervise(
    { child, childPid }: { child: ChildProcess; childPid: Promise<number | undefined> },
    options: SandboxRunOptions,
    release: () => void,
  ): Promise<SandboxedProcess> {
    const grace = this.options.killGraceMs;
    const isolated = this.isolated;
    let stopping: 'timeout' | 'cancel' | undefined;
    let stopped: Promise<void> | undefined;
    let ended = false;

    const streams = [child.stdout, child.stderr].filter((s): s is Readable => s !== null);
    const drained = Promise.all(streams.map((stream) => readInto(stream, options.onOutput)));

    const processExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code, signal) => {
          ended = true;
          resolve({ code, signal });
        });
      },
    );

    const signalTree = async (signal: NodeJS.Signals) => {
      if (ended || child.pid === undefined) return;
      if (!isolated) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // the group is gone
        }
        return;
      }
      const init = await Promise.race([childPid, delay(0).then(() => undefined)]);
      if (signal === 'SIGKILL') {
        // The sandbox's PID 1 dying takes every process of its namespace with it.
        if (init !== undefined) signalProcess(init, 'SIGKILL');
        signalProcess(child.pid, 'SIGKILL');
        return;
      }
      if (init === undefined) return;
      const namespace = await pidNamespaceOf(init);
      if (!namespace) return;
      for (const pid of await processesIn(namespace)) if (pid !== init) signalProcess(pid, signal);
    };

    const stopTree = (reason: 'timeout' | 'cancel') => {
      stopping ??= reason;
      stopped ??= (async () => {
        await signalTree('SIGTERM');
        const exitedInTime = await Promise.race([
          processExit.then(
            () => true,
            () => true,
          ),
          delay(grace).then(() => false),
        ]);
        if (!exitedInTime) await signalTree('SIGKILL');
      })();
      return stopped;
    };

    const timer =
      options.limits.timeoutMs !== undefined
        ? setTimeout(() => void stopTree('timeout'), options.limits.timeoutMs)
        : undefined;
    const onAbort = () => void stopTree('cancel');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    const exited = processExit
      .then(async ({ code, signal }) => {
        // Every process of the sandbox is gone, but a pipe may be held by something that escaped
        // (only possible without a sandbox): its output is not waited for forever.
        const drainTimer = setTimeout(() => streams.forEach((s) => s.destroy()), OUTPUT_DRAIN_MS);
        await drained;
        clearTimeout(drainTimer);
        if (stopped) await stopped;
        const exitCode = code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
        const killedBy = signal ?? signalName(exitCode);
        const result: SandboxResult = { exitCode, signal: killedBy };
        if (stopping) result.stoppedBy = stopping;
        else if (killedBy === 'SIGXCPU' || killedBy === 'SIGKILL') result.stoppedBy = 'limit';
        return result;
      })
      .finally(() => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        release();
      });

    exited.catch(() => undefined);
    return new Promise((resolve, reject) => {
      child.once('spawn', () =>
        resolve({
          pid: child.pid!,
          exited,
          stop: async () => {
            await stopTree('cancel');
            return exited;
          },
        }),
      );
      child.once('error', (err) => {
        release();
        reject(err);
      });
    });
  }
}

/** The sandbox's options from the service's settings. */
export function sandboxOptions(config: Config): SandboxOptions {
  return {
    mode: config.SANDBOX,
    allowUnsandboxed: config.ALLOW_UNSANDBOXED,
    nodeEnv: config.NODE_ENV,
    bwrap: config.SANDBOX_BWRAP,
    uidBase: config.SANDBOX_UID_BASE,
    killGraceMs: config.STEP_KILL_GRACE,
  };
}
