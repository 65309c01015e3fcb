import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, infraEnv } from './env';
import { say, sleep, waitFor } from './log';

const run = promisify(execFile);

/**
 * Runs `measure` with two servers side by side: FerretDB 1.24 as released (our wrapper program
 * built without scripts/infra's patches and `replace`, in a temporary directory, on
 * `releasedPort`) and the benchmark's FerretDB as scripts/infra builds it (patched; started if it
 * is not running, and then stopped again). `checkBuild` may inspect the copied wrapper first.
 */
export async function withReleasedAndPatched<T>(
  releasedPort: number,
  measure: (urls: { released: string; patched: string }) => Promise<T>,
  checkBuild: (buildDir: string) => Promise<void> = async () => undefined,
): Promise<T> {
  const env = infraEnv();
  const patchedPort = env.MONGO_PORT ?? '27017';
  const infra = path.join(REPO_ROOT, 'scripts/infra/infra.sh');
  const infraOptions = { env: { ...process.env, ...env }, timeout: 900_000 };
  let startedMongo = false;
  try {
    await run('bash', [infra, 'status', 'mongo'], infraOptions);
  } catch {
    say('starting the benchmark FerretDB (patched, as scripts/infra builds it)');
    await run('bash', [infra, 'start', 'mongo'], infraOptions);
    startedMongo = true;
  }
  const work = mkdtempSync(path.join(os.tmpdir(), 'bench-ferretdb-'));
  try {
    const build = path.join(work, 'ferretdb-dev');
    cpSync(path.join(REPO_ROOT, 'scripts/infra/ferretdb'), build, { recursive: true });
    await checkBuild(build);
    say('building FerretDB as released');
    const binary = path.join(work, 'ferretdb-released');
    await run(
      'go',
      ['build', '-mod=readonly', '-tags', 'ferretdb_no_postgresql', '-o', binary, '.'],
      { cwd: build, timeout: 600_000 },
    );
    const server = spawn(
      binary,
      [
        'serve',
        '-listen-addr',
        `127.0.0.1:${releasedPort}`,
        '-sqlite-dir',
        path.join(work, 'data'),
        '-log-level',
        'warn',
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    try {
      const released = `mongodb://127.0.0.1:${releasedPort}`;
      await waitFor(
        async () =>
          run(binary, ['ping', '-url', `${released}/`]).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 30_000, what: 'FerretDB as released' },
      );
      return await measure({ released, patched: `mongodb://127.0.0.1:${patchedPort}` });
    } finally {
      server.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (startedMongo) await run('bash', [infra, 'stop', 'mongo'], infraOptions);
  }
}
