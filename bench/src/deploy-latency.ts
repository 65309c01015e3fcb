/**
 * Deploy latency: the time from a trigger through the gateway to the service's URL (through the
 * gateway too) answering with the new commit, for the fixture app (a tiny Node web app in a git
 * repository this benchmark makes), over BENCH_DEPLOYS (default 20) warm deployments after
 * BENCH_WARMUP (default 3). Beside each one, in the same run, the same work is done by hand with
 * the same commands: a shallow `git fetch` of the commit into a fresh directory, `node build.js`,
 * `node server.js` on a free port until `GET /` answers. By hand has no API, database, events,
 * sandbox or health gate: the ratio is what the platform adds to the work itself.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FIXTURE_APP, freePort } from '@platform/shared/testing';
import { answering } from './lib/app';
import { intEnv } from './lib/env';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { startFixtureStack } from './lib/fixture-stack';
import { timedDeploy } from './lib/timed-deploy';
import { deployPhases } from './lib/deploy-phases';
import { main } from './lib/stack';
import { distribution } from './lib/stats';

const run = promisify(execFile);
const DEPLOYS = intEnv('BENCH_DEPLOYS', 20);
const WARMUP = intEnv('BENCH_WARMUP', 3);
const POLL_MS = 10;

/** The same fetch, build and start by hand; resolves with its time in ms. */
async function byHand(repositoryUrl: string, commitHash: string, revision: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-by-hand-'));
  const port = await freePort();
  const started = performance.now();
  const git = (...args: string[]) => run('git', ['-C', dir, ...args]);
  await git('init', '--quiet');
  await git('fetch', '--quiet', '--depth=1', repositoryUrl, commitHash);
  await git('checkout', '--quiet', '--detach', 'FETCH_HEAD');
  await run('sh', ['-c', FIXTURE_APP.buildCommand], { cwd: dir });
  const app = spawn('sh', ['-c', `exec ${FIXTURE_APP.startCommand}`], {
    cwd: dir,
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: 'ignore',
  });
  try {
    await answering(`http://127.0.0.1:${port}/`, revision, Date.now() + 30_000);
    return performance.now() - started;
  } finally {
    app.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

main('deploy-latency', 900, async () => {
  const { repository, servicePath, close, logDir, ...owner } =
    await startFixtureStack('deploy-latency');
  try {
    const platform: number[] = [];
    const measured: string[] = [];
    const manual: number[] = [];
    for (let i = 0; i < WARMUP + DEPLOYS; i++) {
      const commit = await repository.commit({ greeting: `version ${i}` });
      const { elapsed, id } = await timedDeploy(owner.client, servicePath, commit, {
        pollMs: POLL_MS,
        deadlineMs: 60_000,
      });
      const hand = await byHand(repository.url, commit.hash, commit.revision);
      if (i >= WARMUP) {
        measured.push(id);
        platform.push(elapsed);
        manual.push(hand);
      }
      say(
        `deploy ${i + 1}${i < WARMUP ? ' (warm-up)' : ''}: platform ${ms(elapsed)} ms, by hand ${ms(hand)} ms`,
      );
    }

    const viaPlatform = distribution(platform);
    const viaHand = distribution(manual);
    const ratio = Math.round((viaPlatform.p50 / viaHand.p50) * 100) / 100;
    say(
      `trigger → URL answering: p50 ${ms(viaPlatform.p50)} ms, p95 ${ms(viaPlatform.p95)} ms; by hand p50 ${ms(viaHand.p50)} ms, p95 ${ms(viaHand.p95)} ms; ratio of the p50s ${ratio}`,
    );
    // Where the platform's time goes, p50 of each phase (the deployments service's log).
    const phases = logDir ? deployPhases(logDir, measured) : {};
    for (const [phase, p50] of Object.entries(phases)) say(`  ${phase}: p50 ${p50} ms`);
    writeResults('deploy-latency', {
      config: { deploys: DEPLOYS, warmup: WARMUP, pollMs: POLL_MS },
      platformMs: viaPlatform,
      byHandMs: viaHand,
      p50Ratio: ratio,
      platformPhasesP50Ms: phases,
      verdicts: [
        verdict('trigger → URL answering, p95', ms(viaPlatform.p95), '<=', 5_000, ' ms'),
        verdict('platform p50 over by-hand p50', ratio, '<=', 5),
      ],
    });
  } finally {
    await close();
  }
});
