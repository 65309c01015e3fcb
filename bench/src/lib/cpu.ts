import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, infraEnv } from './env';
import { say, sleep } from './log';

const run = promisify(execFile);
/** Linux clock ticks per second (getconf CLK_TCK; 100 on every common kernel). */
const CLK_TCK = 100;

/** CPU seconds (user + system) a process has used so far; null when it is gone or not Linux. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may contain spaces: ") S ppid ..."; utime is 14th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** The pids of the infrastructure servers, from `infra.sh status` ("mongo running pid N"). */
async function infraPids(): Promise<Record<string, number>> {
  const infra = path.join(REPO_ROOT, 'scripts/infra/infra.sh');
  const pids: Record<string, number> = {};
  try {
    const { stdout } = await run('bash', [infra, 'status', 'all'], {
      timeout: 30_000,
      env: { ...process.env, ...infraEnv() },
    });
    for (const match of stdout.matchAll(/^(\w+)\s+running\s+pid (\d+)/gm)) {
      pids[match[1] === 'mongo' ? 'ferretdb' : match[1]!] = Number(match[2]);
    }
  } catch {
    // not all running: whatever was printed is lost; CPU accounting is only a note
  }
  return pids;
}

/** The pids of the stack's processes (as start.sh printed them) and of the infrastructure. */
export async function stackAndInfraPids(stack: { pids: Record<string, number> }) {
  return { ...stack.pids, ...(await infraPids()) };
}

export interface CpuMeter {
  /** CPU milliseconds each process used since the meter started. */
  stop(): Record<string, number>;
}

/**
 * Measures the CPU time of the named processes (and of this one, as "bench") over an interval:
 * where a request's cost goes, process by process, divided by the requests served.
 */
export function cpuMeter(pids: Record<string, number>): CpuMeter {
  const start = new Map(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const self = process.cpuUsage();
  return {
    stop() {
      const used: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) {
        const before = start.get(name);
        const after = cpuSeconds(pid);
        if (before != null && after != null) used[name] = Math.round((after - before) * 1000);
      }
      const own = process.cpuUsage(self);
      used.bench = Math.round((own.user + own.system) / 1000);
      return used;
    },
  };
}

/** Each process's CPU ms divided by `by`, to 3 decimals. */
function divided(cpuMs: Record<string, number>, by: number) {
  return Object.fromEntries(
    Object.entries(cpuMs).map(([name, used]) => [name, Number((used / by).toFixed(3))]),
  );
}

/** CPU ms per request for each process, to 3 decimals. */
export const perRequest = (cpuMs: Record<string, number>, requests: number) =>
  divided(cpuMs, requests);

/** The share of a core each process used over `wallMs` (1 = one core), to 3 decimals. */
export const cpuShare = (cpuMs: Record<string, number>, wallMs: number) => divided(cpuMs, wallMs);

/** The CPU share of each process over `seconds` with nothing asked of the stack. */
export async function cpuShareAtRest(pids: Record<string, number>, seconds: number) {
  say(`measuring ${seconds} s at rest`);
  const meter = cpuMeter(pids);
  await sleep(seconds * 1000);
  const share = cpuShare(meter.stop(), seconds * 1000);
  say(`at rest, CPU share (1 = one core): ${JSON.stringify(share)}`);
  return share;
}
