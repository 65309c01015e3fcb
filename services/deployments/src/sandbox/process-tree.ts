import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { pidNamespaceOf, processesIn, signalProcess } from './namespace-processes';

/** Which limit ended a sandbox. */
export type LimitName = 'memory' | 'processes' | 'cpu';

export interface SandboxResult {
  /** Never 0 when stopped; 128 + n for a process killed by signal n (as shells report it). */
  exitCode: number;
  signal: NodeJS.Signals | null;
  /** Why the platform or the kernel stopped it, when it did not end on its own. */
  stoppedBy?: 'timeout' | 'cancel' | 'limit';
  /** With `stoppedBy: 'limit'`, or when a limit was hit before it failed: which one. */
  limit?: LimitName;
}

/** A long-running sandboxed process (an app). */
export interface SandboxedProcess {
  /** Host pid of the outermost process (bwrap, or `sh` without a sandbox). */
  pid: number;
  /** Where the process's network is reached from the host (its own address in a sandbox). */
  address: string;
  /** Settles when the process tree has ended, its output delivered and its resources freed. */
  exited: Promise<SandboxResult>;
  /** Stops the whole tree: SIGTERM, SIGKILL after the grace period (`stoppedBy: 'cancel'`). */
  stop(): Promise<SandboxResult>;
}

export interface Supervision {
  child: ChildProcess;
  /** The sandbox's PID 1 on the host, once known (undefined without a sandbox). */
  childPid: Promise<number | undefined>;
  isolated: boolean;
  address: string;
  graceMs: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  onOutput: (chunk: string) => void;
  /** Which limit the kernel enforced, asked once the tree has ended. */
  limitHit: () => Promise<LimitName | undefined>;
  /** Frees what the sandbox held (network, group, uid); runs once, however it ended. */
  release: () => Promise<void>;
}

const OUTPUT_DRAIN_MS = 1_000;

function delay(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}

function signalName(code: number): NodeJS.Signals | null {
  const number = code - 128;
  if (number <= 0 || number > 64) return null;
  const entry = Object.entries(os.constants.signals).find(([, n]) => n === number);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
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

/**
 * Follows a started sandbox to its end: its output, its time limit, a cancel, stopping the whole
 * tree (SIGTERM to every process of its PID namespace, SIGKILL to its PID 1 after the grace
 * period), the result, and freeing what it held.
 */
export function supervise(s: Supervision): Promise<SandboxedProcess> {
  const { child } = s;
  let stopping: 'timeout' | 'cancel' | undefined;
  let stopped: Promise<void> | undefined;
  let ended = false;

  const streams = [child.stdout, child.stderr].filter((x): x is Readable => x !== null);
  const drained = Promise.all(streams.map((stream) => readInto(stream, s.onOutput)));

  const processExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        ended = true;
        resolve({ code, signal });
      });
    },
  );
  processExit.catch(() => undefined);

  const signalTree = async (signal: NodeJS.Signals) => {
    if (ended || child.pid === undefined) return;
    if (!s.isolated) {
      signalProcess(-child.pid, signal);
      return;
    }
    const init = await Promise.race([s.childPid, Promise.resolve(undefined)]);
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
      const grace = delay(s.graceMs);
      const exitedInTime = await Promise.race([
        processExit.then(
          () => true,
          () => true,
        ),
        grace.promise.then(() => false),
      ]);
      grace.cancel();
      if (!exitedInTime) await signalTree('SIGKILL');
    })();
    return stopped;
  };

  const timer =
    s.timeoutMs !== undefined ? setTimeout(() => void stopTree('timeout'), s.timeoutMs) : undefined;
  const onAbort = () => void stopTree('cancel');
  s.signal?.addEventListener('abort', onAbort, { once: true });
  if (s.signal?.aborted) onAbort();

  let released: Promise<void> | undefined;
  const release = () => (released ??= s.release().catch(() => undefined));

  const exited = processExit
    .then(async ({ code, signal }) => {
      // Every process of the sandbox is gone, but a pipe may be held by something that escaped
      // (only possible without a sandbox): its output is not waited for forever.
      const drainTimer = setTimeout(() => streams.forEach((x) => x.destroy()), OUTPUT_DRAIN_MS);
      await drained;
      clearTimeout(drainTimer);
      if (stopped) await stopped;
      const exitCode = code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
      const killedBy = signal ?? signalName(exitCode);
      const result: SandboxResult = { exitCode, signal: killedBy };
      const limit = killedBy === 'SIGXCPU' ? 'cpu' : await s.limitHit().catch(() => undefined);
      if (limit) result.limit = limit;
      if (stopping) result.stoppedBy = stopping;
      else if (killedBy === 'SIGXCPU' || (killedBy === 'SIGKILL' && limit)) {
        result.stoppedBy = 'limit';
      }
      return result;
    })
    .finally(async () => {
      clearTimeout(timer);
      s.signal?.removeEventListener('abort', onAbort);
      await release();
    });
  exited.catch(() => undefined);

  return new Promise((resolve, reject) => {
    child.once('spawn', () =>
      resolve({
        pid: child.pid!,
        address: s.address,
        exited,
        stop: async () => {
          await stopTree('cancel');
          return exited;
        },
      }),
    );
    child.once('error', (err) => {
      void release();
      reject(err);
    });
  });
}
