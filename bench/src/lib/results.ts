import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, RESULTS_DIR, externalStack, infraEnv } from './env';
import { say } from './log';

/** Where and on what a result was measured: the machine is shared and noisy, so say so. */
export function machine() {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT })
      .toString()
      .trim();
  } catch {
    // not a git checkout
  }
  // The stack runs what is in the working tree: name what differed from the commit.
  let uncommitted: string[] = [];
  try {
    uncommitted = execFileSync('git', ['status', '--porcelain', '--', 'services', 'libs'], {
      cwd: REPO_ROOT,
    })
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    commit,
    uncommittedServiceFiles: uncommitted,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    stack: externalStack()
      ? 'external (BENCH_BASE_URL)'
      : 'own (scripts/start.sh, STACK_NAME=bench)',
    database: 'FerretDB 1.24 (SQLite backend) on 127.0.0.1',
    infrastructure:
      process.env.BENCH_INFRA === 'shared'
        ? 'shared Redis/Kafka/FerretDB (BENCH_INFRA=shared)'
        : `private Redis/Kafka/FerretDB (${infraEnv().PLATFORM_RUN_DIR})`,
  };
}

/**
 * Writes bench/results/<name>.json (through a temporary file, so a crash leaves the old one).
 * `machineNotes` replaces what machine() assumes (a benchmark that starts no stack says so).
 */
export function writeResults(
  name: string,
  results: Record<string, unknown>,
  machineNotes: Record<string, unknown> = {},
): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  const body = { benchmark: name, machine: { ...machine(), ...machineNotes }, ...results };
  writeFileSync(`${file}.tmp`, `${JSON.stringify(body, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  say(`results written to ${path.relative(REPO_ROOT, file)}`);
  return file;
}

/** A target and whether the measurement met it, for the JSON and the final table. */
export function verdict(
  what: string,
  measured: number,
  op: '<' | '<=' | '>=',
  target: number,
  unit = '',
) {
  const met =
    op === '<' ? measured < target : op === '<=' ? measured <= target : measured >= target;
  say(`${met ? 'MET ' : 'MISS'} ${what}: ${measured}${unit} (target ${op} ${target}${unit})`);
  return { what, measured, target: `${op} ${target}${unit}`, met };
}
