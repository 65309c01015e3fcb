import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testLogger } from '@platform/shared/testing';
import { Sandbox } from '../../sandbox/sandbox';
import type { Launcher } from './launcher';
import { sandboxLauncher } from './sandbox-launcher';
import { TEST_LIMITS, testSandboxOptions } from '../../sandbox/testing';
import { Supervisor } from './supervisor';
import { isRunning, testRelease } from './testing';

/**
 * A launcher whose starts wait until `open()` is called (`reached` settles when the first one
 * waits), then start real processes, their pids pushed to `pids`.
 */
function gatedLauncher(inner: Launcher, pids: number[]) {
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const launcher: Launcher = {
    async start(spec) {
      reach();
      await gate;
      const launched = await inner.start(spec);
      pids.push(launched.pid);
      return launched;
    },
  };
  return { launcher, open, reached };
}

describe('the Supervisor (in this process)', () => {
  let sandbox: Sandbox;
  let runtimeDir: string;
  beforeAll(async () => {
    runtimeDir = mkdtempSync(path.join(tmpdir(), 'rt-'));
    sandbox = await Sandbox.create(testSandboxOptions({ killGraceMs: 2_000 }));
  });
  const launchedPids: number[] = [];
  afterAll(async () => {
    // Whatever a failed test left running (bwrap takes its sandbox with it).
    for (const pid of launchedPids.filter(isRunning)) process.kill(pid, 'SIGKILL');
    await sandbox.close();
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  const supervisorWith = (launcher: Launcher) =>
    new Supervisor({
      launcher,
      runtimeDir,
      logger: testLogger('supervisor'),
      restart: { initialDelayMs: 100, maxDelayMs: 1_000, limit: 5, windowMs: 60_000 },
      stopGraceMs: 2_000,
      drainTimeoutMs: 1_000,
      logLimits: { maxLineBytes: 16 * 1024, maxBytes: 1024 * 1024 },
    });

  it('stops a process that was still being started when its release was stopped', async () => {
    const gated = gatedLauncher(
      sandboxLauncher(sandbox, { limits: TEST_LIMITS, network: true }),
      launchedPids,
    );
    const supervisor = supervisorWith(gated.launcher);
    const spec = testRelease('svc-gated', 'v1');

    const starting = supervisor.start(spec);
    await gated.reached;
    const stopping = supervisor.stopRelease(spec.releaseId);
    gated.open();
    const [started] = await Promise.all([starting, stopping]);

    expect(started).toMatchObject({
      state: 'stopped',
      failure: 'stopped before it answered healthy',
    });
    expect(launchedPids).toHaveLength(1);
    expect(isRunning(launchedPids[0]!)).toBe(false);
    expect(supervisor.list()).toEqual([]);
  });
});
