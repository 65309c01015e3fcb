import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uniqueName, waitFor } from '@platform/shared/testing';

const FIXTURES = path.join(__dirname, 'fixtures');
const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Running, not a zombie: orphans may never be reaped where PID 1 does not reap them. */
export async function isProcessRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** Whether none of these processes runs any more. */
export async function allStopped(pids: number[]): Promise<boolean> {
  const running = await Promise.all(pids.map(isProcessRunning));
  return running.every((isRunning) => !isRunning);
}

/** Kills what a test left running, so a failed assertion leaves no sleeping process behind. */
function killQuietly(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * The fixture steps of a test file, and the directory they write their pids to: made before the
 * file's tests, removed after them, with every process a test read there killed should it still
 * run. Steps find the directory in `PID_DIR`, which the commands here set themselves (a pipeline
 * passes its steps no environment of the service's), and name their file after `DEPLOYMENT_ID`.
 */
export function useFixtureSteps() {
  const dir = path.join(tmpdir(), uniqueName('deployment-steps'));
  const seen: number[] = [];
  beforeAll(() => mkdir(dir));
  afterAll(async () => {
    killQuietly(seen);
    await rm(dir, { recursive: true, force: true });
  });
  const fixture = (name: string) =>
    `PID_DIR=${shellQuote(dir)} bash ${shellQuote(path.join(FIXTURES, name))}`;
  return {
    dir,
    /** Runs until stopped; writes its pid and its child's. */
    longStep: fixture('long-step.sh'),
    /** Ignores SIGTERM: only SIGKILL stops it. */
    stubbornStep: fixture('stubborn-step.sh'),
    /** The pids the step of `name` (a deployment id) wrote, once it has written them. */
    async pidsOf(name: string): Promise<number[]> {
      const pids = await waitFor(
        async () => {
          const text = await readFile(path.join(dir, `${name}.pids`), 'utf8').catch(() => '');
          const found = text.trim().split(/\s+/).filter(Boolean).map(Number);
          return found.length > 0 ? found : null;
        },
        { what: `pids of ${name}` },
      );
      seen.push(...pids);
      return pids;
    },
  };
}
