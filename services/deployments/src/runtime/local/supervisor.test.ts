import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { Sandbox } from '../../sandbox/sandbox';
import type { Launcher } from './launcher';
import { sandboxLauncher } from './sandbox-launcher';
import { TEST_LIMITS, testSandboxOptions } from '../../sandbox/testing';
import { isRunning, testRelease, testSupervisor } from './testing';
import { waitFor } from '@platform/shared/testing';

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

  const supervisorWith = (launcher: Launcher, retentionMs = 60_000) =>
    testSupervisor({ launcher, runtimeDir, retentionMs });

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

  const sandboxed = () => sandboxLauncher(sandbox, { limits: TEST_LIMITS, network: true });

  it('writes **** in a release log for every secret value the app prints, however it splits it', async () => {
    const supervisor = supervisorWith(sandboxed());
    const secret = 'tok-3f9a-secret-value';
    const spec = testRelease('svc-secret', 'v1', {
      appEnv: { API_TOKEN: secret, PUBLIC_NAME: 'shown' },
      secretNames: ['API_TOKEN'],
      // The value whole, then in two writes 300 ms apart, then the public one.
      command:
        'echo "token=$API_TOKEN"; printf "split=%s" "${API_TOKEN%%-secret*}"; sleep 0.3; ' +
        'echo "-secret${API_TOKEN#*-secret}"; echo "name=$PUBLIC_NAME"; exec node server.js',
    });

    const started = await supervisor.start(spec);
    await supervisor.stopRelease(spec.releaseId);
    const onDisk = readFileSync(started.logFile, 'utf8');

    expect(started.state).toBe('ready');
    expect(onDisk).not.toContain(secret);
    expect(onDisk).not.toContain('tok-3f9a');
    expect(onDisk).toContain('token=****\n');
    expect(onDisk).toContain('split=****\n');
    expect(onDisk).toContain('name=shown\n');
  });

  it('forgets a stopped release and deletes its log once its retention has passed', async () => {
    const supervisor = supervisorWith(sandboxed(), 1_000);
    const spec = testRelease('svc-forgotten', 'v1');
    const started = await supervisor.start(spec);

    await supervisor.stopRelease(spec.releaseId);

    // Still there for the deployments service to read its last lines…
    expect(supervisor.describe(spec.releaseId).state).toBe('stopped');
    expect((await supervisor.readLog(spec.releaseId, 0, 65_536)).text).toContain('==> stopped');
    // …then gone, its log with it.
    await waitFor(() => !existsSync(started.logFile), { what: 'the release log to be deleted' });
    expect(() => supervisor.describe(spec.releaseId)).toThrow(/not found/i);
  });

  it('deletes the logs an earlier supervisor left when it starts', () => {
    const left = path.join(runtimeDir, 'logs', 'gone-with-an-earlier-supervisor.log');
    writeFileSync(left, 'output of a release no supervisor knows\n');

    supervisorWith(sandboxed());

    expect(existsSync(left)).toBe(false);
  });

  it('fails a release whose launch throws, and closes its log', async () => {
    const supervisor = supervisorWith({
      start: () => Promise.reject(new Error('no sandbox uid is free')),
    });
    const spec = testRelease('svc-unlaunchable', 'v1');

    const started = await supervisor.start(spec);

    expect(started).toMatchObject({
      state: 'failed',
      failure: 'could not start: no sandbox uid is free',
    });
    expect(supervisor.list()).toEqual([]);
    // Closed: everything it was given is on disk, ending with its stop.
    expect(readFileSync(started.logFile, 'utf8')).toMatch(
      /==> failed: could not start: no sandbox uid is free\n==> stopped \(it was not running\)\n$/,
    );
  });
});

/**
 * A program that embeds a Supervisor (the compiled one: run `tsc -b` first) whose apps are plain
 * processes of this machine, their health checks answered by a server of the program's own, and
 * whose restarts wait 60 s. Its services' apps crash after 2 s; during the restart delay, one
 * service is stopped and the other's release replaced, then stopped too. It prints how many apps
 * were started and ends: nothing of the Supervisor may keep it alive.
 */
const STOPPED_DURING_RESTART_DELAY = `
const { spawn } = require('node:child_process');
const http = require('node:http');
const { setTimeout: delay } = require('node:timers/promises');
const { Supervisor } = require(process.env.SUPERVISOR_JS);
const health = http.createServer((req, res) => res.end('ok'));
health.listen(0, '127.0.0.1', async () => {
  let starts = 0;
  const launcher = {
    async start(spec) {
      starts++;
      const child = spawn('sh', ['-c', spec.command], { stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      return { pid: child.pid, host: '127.0.0.1', port: health.address().port, exited,
        async stop() { child.kill('SIGKILL'); return exited; } };
    },
  };
  const quiet = { info() {}, warn() {}, error() {} };
  const supervisor = new Supervisor({
    launcher, runtimeDir: process.env.RUNTIME_DIR, logger: quiet,
    restart: { initialDelayMs: 60000, maxDelayMs: 60000, limit: 5, windowMs: 600000 },
    stopGraceMs: 1000, drainTimeoutMs: 1000,
    logLimits: { maxLineBytes: 16384, maxBytes: 1048576 }, retentionMs: 60000,
  });
  const release = (serviceId, releaseId, command) => ({ serviceId, releaseId, workspace: '/tmp',
    command, env: {}, healthCheckPath: '/', healthTimeoutMs: 10000 });
  const restarting = async (id) => {
    while (supervisor.describe(id).state !== 'restarting') await delay(20);
  };
  for (const id of ['a', 'b']) {
    await supervisor.start(release('svc-' + id, id + '1', 'sleep 2; exit 3'));
    await supervisor.promote(id + '1');
    await restarting(id + '1');
  }
  await supervisor.stopService('svc-a');
  await supervisor.start(release('svc-b', 'b2', 'exec sleep 600'));
  await supervisor.promote('b2');
  await supervisor.stopRelease('b2');
  health.close();
  console.log(JSON.stringify({ starts, a: supervisor.describe('a1').state, b: supervisor.describe('b1').state }));
});
`;

describe('a crashed app stopped during its restart delay', () => {
  it('is never started again, and nothing of it stays armed', async () => {
    const runtimeDir = mkdtempSync(path.join(tmpdir(), 'rt-restart-'));
    const child = spawn(process.execPath, ['-e', STOPPED_DURING_RESTART_DELAY], {
      env: {
        PATH: process.env.PATH,
        RUNTIME_DIR: runtimeDir,
        SUPERVISOR_JS: path.resolve(__dirname, '../../../dist/runtime/local/supervisor.js'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

    // Its restarts were 60 s away: it ends long before unless a restart timer keeps it alive.
    const deadline = new AbortController();
    const exitCode = await Promise.race([
      exited,
      delay(30_000, 'still running after 30 s', { signal: deadline.signal }),
    ]);
    deadline.abort();
    child.kill('SIGKILL');
    const logOf = (id: string) => readFileSync(path.join(runtimeDir, 'logs', `${id}.log`), 'utf8');

    expect(exitCode).toBe(0);
    // a1, b1 and b2, each once: neither crashed release came back after it was stopped.
    expect(JSON.parse(output)).toEqual({ starts: 3, a: 'stopped', b: 'stopped' });
    expect(logOf('a1')).toMatch(/restarting in 60000 ms[^]*==> stopped/);
    expect(logOf('b1')).toMatch(/restarting in 60000 ms[^]*==> replaced by b2/);
    rmSync(runtimeDir, { recursive: true, force: true });
  }, 60_000);
});
