import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';

export interface StepOptions {
  /** A shell command line, run with `sh -c`. */
  command: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** After SIGTERM, how long the process group gets before SIGKILL. */
  killGraceMs: number;
  onOutput: (text: string) => void;
}

export type StepResult =
  | { outcome: 'succeeded' }
  | { outcome: 'failed'; exitCode: number | null; signal: NodeJS.Signals | null }
  | { outcome: 'spawn-failed'; message: string }
  | { outcome: 'timed-out' }
  | { outcome: 'stopped' };

export interface RunningStep {
  pid: number | undefined;
  result: Promise<StepResult>;
  /** Stops the whole process group: SIGTERM, then SIGKILL after the grace period. */
  stop(): Promise<void>;
}

/** After the command exits, how long its output may still trickle in before we stop reading. */
const OUTPUT_DRAIN_MS = 1_000;
const GROUP_POLL_MS = 50;

/** Signals the process group led by `pid`; false when it no longer exists. */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group is still running. A dead process whose parent is gone stays
 * a zombie where PID 1 does not reap orphans (some containers), and still answers signal 0, so
 * on Linux the group's members are looked up in /proc and zombies do not count.
 */
export async function isGroupRunning(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}

async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await isGroupRunning(pgid))) return true;
    await delay(GROUP_POLL_MS);
  }
  return !(await isGroupRunning(pgid));
}

/**
 * Runs one pipeline step as a child process in its own process group (detached), so stopping
 * it also stops whatever it started: a build tool, its compilers, a `sleep`.
 */
export function startStep(options: StepOptions): RunningStep {
  const child = spawn(options.command, {
    shell: true,
    detached: true,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stopping: 'stopped' | 'timed-out' | undefined;
  let stopped: Promise<void> | undefined;

  const stopGroup = (reason: 'stopped' | 'timed-out') => {
    stopping ??= reason;
    stopped ??= (async () => {
      const pid = child.pid;
      if (pid === undefined) return;
      if (!signalGroup(pid, 'SIGTERM')) return;
      if (!(await waitForGroupExit(pid, options.killGraceMs))) {
        signalGroup(pid, 'SIGKILL');
        await waitForGroupExit(pid, options.killGraceMs);
      }
    })();
    return stopped;
  };

  const streams = [child.stdout, child.stderr].filter((s): s is Readable => s !== null);
  const drained = Promise.all(streams.map((stream) => readInto(stream, options.onOutput)));

  const result = new Promise<StepResult>((resolve) => {
    const timer = setTimeout(() => void stopGroup('timed-out'), options.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ outcome: 'spawn-failed', message: err.message });
    });
    child.once('exit', async (exitCode, signal) => {
      clearTimeout(timer);
      // A background process may hold the pipes open; its output is not waited for forever.
      const drainTimer = setTimeout(() => streams.forEach((s) => s.destroy()), OUTPUT_DRAIN_MS);
      await drained;
      clearTimeout(drainTimer);
      if (stopping) {
        await stopped;
        resolve({ outcome: stopping });
      } else if (exitCode === 0) {
        resolve({ outcome: 'succeeded' });
      } else {
        resolve({ outcome: 'failed', exitCode, signal });
      }
    });
  });

  return { pid: child.pid, result, stop: () => stopGroup('stopped') };
}

function readInto(stream: Readable, onOutput: (text: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => onOutput(decoder.write(chunk)));
    stream.once('close', () => {
      const rest = decoder.end();
      if (rest) onOutput(rest);
      resolve();
    });
    stream.once('error', () => resolve());
  });
}
