import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '@platform/shared/testing';

export const FIXTURES = path.join(__dirname, 'fixtures');
export const LONG_STEP = `bash ${path.join(FIXTURES, 'long-step.sh')}`;
export const STUBBORN_STEP = `bash ${path.join(FIXTURES, 'stubborn-step.sh')}`;

/** Running, not a zombie: orphans may never be reaped where PID 1 does not reap them. */
export async function isProcessRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** The pids a fixture step wrote, once it has written them. */
export async function pidsWrittenBy(pidDir: string, name: string): Promise<number[]> {
  return waitFor(
    async () => {
      const text = await readFile(path.join(pidDir, `${name}.pids`), 'utf8').catch(() => '');
      const pids = text.trim().split(/\s+/).filter(Boolean).map(Number);
      return pids.length > 0 ? pids : null;
    },
    { what: `pids of ${name}` },
  );
}

/** Kills what a test left running, so a failed assertion leaves no sleeping process behind. */
export function killQuietly(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
