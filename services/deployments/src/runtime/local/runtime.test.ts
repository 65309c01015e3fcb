import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { freePort, useRunning, waitFor } from '@platform/shared/testing';
import { connectLocalRuntime, RuntimeError, SUPERVISOR_MAIN } from './client';
import {
  isRunning,
  probe,
  startTestRuntime,
  stopSupervisor,
  testRelease,
  withTestRuntime,
  writeTestApp,
  type TestRuntime,
} from './testing';

const versionAt = async (runtime: TestRuntime, serviceId: string) => {
  const { status, body } = await runtime.get(serviceId);
  return {
    status,
    version: status === 200 ? (JSON.parse(body) as { version: string }).version : body,
  };
};

/** Every lane saw only `versions`, in this order, each at least once overall, and no error. */
function expectInOrder(lanes: (string | Error)[][], versions: string[]) {
  for (const lane of lanes) {
    expect(lane.filter((answer) => answer instanceof Error)).toEqual([]);
    const changes = lane.filter((answer, i) => i === 0 || answer !== lane[i - 1]);
    expect(versions.join(',')).toContain(changes.join(','));
  }
  const seen = new Set(lanes.flat());
  for (const version of versions) expect(seen).toContain(version);
}

describe('the local runtime', () => {
  const runtime = useRunning(() => startTestRuntime());

  it('starts a release, waits for its health check and serves it at the service URL once promoted', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-first', 'v1');

    const started = await client.start(spec);
    expect(started).toMatchObject({ state: 'ready', live: false, releaseId: spec.releaseId });
    expect(await runtime().get('svc-first')).toMatchObject({ status: 404 });

    const { release, previous } = await client.promote(spec.releaseId);

    expect(release).toMatchObject({ state: 'live', live: true });
    expect(previous).toBeNull();
    expect(await versionAt(runtime(), 'svc-first')).toEqual({ status: 200, version: 'v1' });
    const { text } = await client.readLog(spec.releaseId);
    expect(text).toMatch(
      /==> starting `exec node server.js`\n==> started, pid \d+, PORT 8080 at [\d.]+\n/,
    );
    expect(text).toContain(`listening on ${started.port}`);
    expect(text).toContain('==> healthy: GET /healthz answered');
    expect(text).toContain('==> live: the service URL routes to this release');
  });

  /** The lines of a release's log that start with `prefix`, without it. */
  const printed = async (releaseId: string, prefix: string) =>
    (await runtime().client.readLog(releaseId)).text
      .split('\n')
      .filter((line) => line.startsWith(prefix))
      .map((line) => line.slice(prefix.length));

  it('gives the app PORT and the given environment only, its home in its /tmp', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-env', 'v1', {
      command: 'env | sed "s/^/env: /" && exec node server.js',
    });
    const started = await client.start(spec);
    const lines = (await printed(spec.releaseId, 'env: ')).sort();

    expect(
      lines.filter(
        (line) => !line.startsWith('PWD=') && !line.startsWith('SHLVL=') && !line.startsWith('_='),
      ),
    ).toEqual(
      [`PATH=${process.env.PATH}`, 'HOME=/tmp', `PORT=${started.port}`, 'VERSION=v1'].sort(),
    );
    await client.stopRelease(spec.releaseId);
  });

  it('runs apps in the sandbox, where no process of the platform can be seen', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-sandboxed', 'v1', {
      command:
        "printf 'seen: '; cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; exec node server.js",
    });

    await client.start(spec);
    const [seen] = await printed(spec.releaseId, 'seen: ');

    expect(seen).toContain('cat /proc/');
    expect(seen).not.toContain('supervisor-main');
    expect(seen).not.toContain('jest');
    await client.stopRelease(spec.releaseId);
  });

  it('runs an app on its build read-only: its writes fail, the next release finds the build as it was, and no start hands the files over', async () => {
    const { client } = runtime();
    const workspace = writeTestApp();
    const original = readFileSync(path.join(workspace, 'server.js'), 'utf8');
    const owners = () =>
      [workspace, path.join(workspace, 'server.js')].map((file) => statSync(file).uid);
    const before = owners();
    const tampering = testRelease('svc-read-only', 'v1', {
      workspace,
      command:
        'echo "tampered" > server.js; touch left-behind; echo "tmp: $(echo ok > /tmp/x && cat /tmp/x)"; ' +
        'exec node server.js',
    });

    const first = await client.start(tampering);
    const ownersWhileRunning = owners();
    await client.stopRelease(tampering.releaseId);
    const second = await client.start(testRelease('svc-read-only', 'v2', { workspace }));
    const ownersAfterTwoStarts = owners();

    expect(first.state).toBe('ready');
    const { text } = await client.readLog(tampering.releaseId);
    expect(text).toContain('Read-only file system');
    // Its own /tmp is where an app writes.
    expect(text).toContain('tmp: ok');
    expect(second.state).toBe('ready');
    expect(readFileSync(path.join(workspace, 'server.js'), 'utf8')).toBe(original);
    expect(existsSync(path.join(workspace, 'left-behind'))).toBe(false);
    expect(ownersWhileRunning).toEqual(before);
    expect(ownersAfterTwoStarts).toEqual(before);
    await client.stopRelease(second.releaseId);
  });

  it('replaces the live release at the same URL without a failed request, then stops the old one', async () => {
    const { client } = runtime();
    const first = await client.deploy(testRelease('svc-switch', 'v1'));
    const probes = probe(runtime(), 'svc-switch');
    await waitFor(() => probes.count() >= 8);

    const second = await client.deploy(testRelease('svc-switch', 'v2'));
    const afterSwitch = await versionAt(runtime(), 'svc-switch');
    const lanes = await probes.stop();

    expect(second).toMatchObject({ state: 'live', live: true });
    expect(afterSwitch).toEqual({ status: 200, version: 'v2' });
    expect(lanes.flat().length).toBeGreaterThan(20);
    expectInOrder(lanes, ['v1', 'v2']);
    expect(isRunning(first.pid!)).toBe(false);
    expect((await client.list()).filter((r) => r.serviceId === 'svc-switch')).toEqual([
      expect.objectContaining({ releaseId: second.releaseId, live: true }),
    ]);
    expect((await client.readLog(first.releaseId)).text).toContain(
      `==> replaced by ${second.releaseId}`,
    );
  });

  it('sends new requests to the new release at once and stops the old one only after it answered what it had', async () => {
    const { client } = runtime();
    const first = await client.deploy(testRelease('svc-drain', 'v1'));
    const slow = runtime()
      .get('svc-drain', '/slow?ms=5000')
      .then((answer) => ({ ...answer, at: Date.now() }));
    await waitFor(async () => (await client.describe(first.releaseId)).inflight === 1);
    const second = testRelease('svc-drain', 'v2');
    await client.start(second);

    const promoted = client
      .promote(second.releaseId)
      .then((result) => ({ ...result, at: Date.now() }));
    const served = await waitFor(
      async () => (await versionAt(runtime(), 'svc-drain')).version === 'v2' && Date.now(),
    );
    const [slowAnswer, promotion] = await Promise.all([slow, promoted]);

    expect(slowAnswer).toMatchObject({ status: 200, body: JSON.stringify({ version: 'v1' }) });
    expect(served).toBeLessThan(slowAnswer.at);
    expect(promotion.previous).toBe(first.releaseId);
    expect(promotion.at).toBeGreaterThanOrEqual(slowAnswer.at);
    expect(isRunning(first.pid!)).toBe(false);
  });

  it('stops a release that never answers healthy and keeps the previous one serving throughout', async () => {
    const { client } = runtime();
    await client.deploy(testRelease('svc-unhealthy', 'v1'));
    const probes = probe(runtime(), 'svc-unhealthy');
    await waitFor(() => probes.count() >= 8);
    const spec = testRelease('svc-unhealthy', 'v2', {
      appEnv: { UNHEALTHY: '1' },
      healthTimeoutMs: 1_500,
    });

    const attempt = await client.deploy(spec);
    const lanes = await probes.stop();

    expect(attempt).toMatchObject({
      state: 'failed',
      live: false,
      failure: 'GET /healthz did not answer 2xx or 3xx within 1500 ms (last: status 500)',
    });
    expect(lanes.flat().length).toBeGreaterThan(10);
    expectInOrder(lanes, ['v1']);
    expect(await versionAt(runtime(), 'svc-unhealthy')).toEqual({ status: 200, version: 'v1' });
    expect(attempt.pid).toBeNull();
    const { text } = await client.readLog(spec.releaseId);
    const pid = Number(/==> started, pid (\d+)/.exec(text)?.[1]);
    expect(isRunning(pid)).toBe(false);
    expect((await client.list()).map((r) => r.releaseId)).not.toContain(spec.releaseId);
    expect(text).toContain('==> failed: GET /healthz');
  });

  it('stops a release that is waiting for its health check (a cancel), which resolves its start as stopped', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-cancel', 'v1', {
      appEnv: { UNHEALTHY: '1' },
      healthTimeoutMs: 30_000,
    });
    const starting = client.start(spec);
    const waiting = await waitFor(async () => {
      const info = await client.describe(spec.releaseId).catch(() => null);
      return info?.state === 'starting' && info.pid ? info : null;
    });

    await client.stopRelease(spec.releaseId);
    const started = await starting;

    expect(started).toMatchObject({
      state: 'stopped',
      failure: 'stopped before it answered healthy',
      pid: null,
    });
    expect(isRunning(waiting.pid!)).toBe(false);
  });

  it('fails a release whose process exits before it is healthy', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-exits', 'v1', { command: 'echo "no such app" >&2; exit 7' });

    const attempt = await client.start(spec);

    expect(attempt).toMatchObject({
      state: 'failed',
      failure: 'exited before GET /healthz answered healthy',
    });
    const { text } = await client.readLog(spec.releaseId);
    expect(text).toContain('no such app');
    expect(text).toContain('==> exited with code 7');
    await expect(client.promote(spec.releaseId)).rejects.toMatchObject({ status: 409 });
  });

  it('restarts a live app that crashed, and its URL answers again', async () => {
    const { client } = runtime();
    const live = await client.deploy(testRelease('svc-crash', 'v1'));
    const before = await client.readLog(live.releaseId);

    await runtime()
      .get('svc-crash', '/crash')
      .catch(() => undefined);
    const after = await waitFor(
      async () => {
        const info = await client.describe(live.releaseId);
        return info.restarts === 1 && info.pid !== live.pid && info.state === 'live' ? info : null;
      },
      { what: 'the restart' },
    );
    await waitFor(async () => (await versionAt(runtime(), 'svc-crash')).status === 200);

    expect(after.port).toBe(live.port);
    // Followed from where the last read ended: only what came since.
    const { text } = await client.readLog(live.releaseId, before.nextOffset);
    expect(text).toMatch(
      /==> exited with code 3\n==> restarting in 100 ms \(restart 1 of 5 within 600000 ms\)\n==> started, pid \d+, PORT 8080 at [\d.]+\n/,
    );
    expect(text).not.toContain('==> starting');
    expect(before.text).toContain('==> starting');
    expect(before.text).not.toContain('exited');
  });

  it('rejects a release it cannot run with 400 and one started twice with 409', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-twice', 'v1');
    await client.start(spec);

    await expect(client.start(spec)).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    await expect(client.start({ ...spec, releaseId: 'x', workspace: 'relative' })).rejects.toEqual(
      expect.any(RuntimeError),
    );
    await expect(
      client.start({ ...spec, releaseId: 'y', serviceId: 'Not A Host' }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    await client.stopRelease(spec.releaseId);
  });

  it('streams request and response bodies through the router', async () => {
    const { client } = runtime();
    await client.deploy(testRelease('svc-echo', 'v1'));
    const body = 'x'.repeat(1024 * 1024);

    const answer = await runtime().get('svc-echo', '/echo', { method: 'POST', body });

    expect(answer).toEqual({ status: 200, body });
  });

  it('stops every release of a service: the URL answers 404 and its address is gone', async () => {
    const { client } = runtime();
    const live = await client.deploy(testRelease('svc-stop', 'v1'));

    await client.stopService('svc-stop');

    const answer = await runtime().get('svc-stop');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'NOT_FOUND',
      message: 'No deployment of service svc-stop is live.',
    });
    expect(isRunning(live.pid!)).toBe(false);
    expect((await client.list()).map((r) => r.serviceId)).not.toContain('svc-stop');
    // Its address went with its sandbox: nothing answers there.
    await expect(fetch(`http://${live.host}:${live.port}/healthz`)).rejects.toThrow();
  });
});

describe('an app that keeps crashing', () => {
  const runtime = useRunning(() =>
    startTestRuntime({ RUNTIME_RESTART_LIMIT: '2', RUNTIME_RESTART_WINDOW: '1m' }),
  );

  it('is restarted with a doubling backoff, then given up on, and its log says so', async () => {
    const { client } = runtime();
    const spec = testRelease('svc-crashloop', 'v1', { appEnv: { CRASH_AFTER_MS: '700' } });
    await client.deploy(spec);

    const final = await waitFor(
      async () => {
        const info = await client.describe(spec.releaseId);
        return info.state === 'crashed' ? info : null;
      },
      { what: 'the release to be given up on' },
    );

    expect(final).toMatchObject({ restarts: 2, live: true, pid: null });
    expect(final.failure).toBe('crashed 3 times within 60000 ms: not restarted again');
    const runtimeLines = (await client.readLog(spec.releaseId)).text
      .split('\n')
      .filter((line) => line.startsWith('==> ') && !/^==> (started, pid|healthy again)/.test(line));
    expect(runtimeLines.slice(3)).toEqual([
      '==> exited with code 3',
      '==> restarting in 100 ms (restart 1 of 2 within 60000 ms)',
      '==> exited with code 3',
      '==> restarting in 200 ms (restart 2 of 2 within 60000 ms)',
      '==> exited with code 3',
      '==> gave up: crashed 3 times within 60000 ms: not restarted again',
    ]);
    expect((await runtime().get('svc-crashloop')).status).toBe(502);
  });
});

describe('a supervisor without a sandbox', () => {
  it('refuses to start unless development explicitly allows it', async () => {
    await expect(startTestRuntime({ SANDBOX: 'none' })).rejects.toThrow(
      /the runtime supervisor exited with 1: see .*supervisor\.log/,
    );
  });

  it('runs apps as plain processes when ALLOW_UNSANDBOXED=true', () =>
    withTestRuntime({ SANDBOX: 'none', ALLOW_UNSANDBOXED: 'true' }, async (runtime) => {
      await runtime.client.deploy(testRelease('svc-plain', 'v1'));

      expect(await versionAt(runtime, 'svc-plain')).toEqual({ status: 200, version: 'v1' });
    }));
});

describe('a supervisor that is stopped', () => {
  it('stops its apps with it, leaving no process behind', () =>
    withTestRuntime({}, async (runtime) => {
      const live = await runtime.client.deploy(testRelease('svc-shutdown', 'v1'));
      expect(isRunning(live.pid!)).toBe(true);

      await stopSupervisor(runtime.client);

      expect(isRunning(live.pid!)).toBe(false);
      await expect(runtime.client.ping()).rejects.toThrow();
    }));
});

describe('a supervisor that is killed', () => {
  it('takes its sandboxed apps with it', () =>
    withTestRuntime({}, async (runtime) => {
      const supervisorPid = await runtime.client.ping();
      const live = await runtime.client.deploy(testRelease('svc-killed', 'v1'));

      process.kill(supervisorPid, 'SIGKILL');

      await waitFor(() => !isRunning(live.pid!), { what: 'the app to end with its supervisor' });
      await expect(runtime.get('svc-killed')).rejects.toThrow();
    }));
});

describe('a second supervisor on the same runtime directory', () => {
  const runtime = useRunning(() => startTestRuntime());

  it('exits, leaving the first one’s apps and their logs alone', async () => {
    const { client, runtimeDir } = runtime();
    const live = await client.deploy(testRelease('svc-first-supervisor', 'v1'));
    const second = spawn(process.execPath, [SUPERVISOR_MAIN], {
      env: {
        ...runtime().env,
        PATH: process.env.PATH,
        RUNTIME_DIR: runtimeDir,
        RUNTIME_ROUTER_PORT: String(await freePort()),
      },
      stdio: 'ignore',
    });

    const exitCode = await new Promise((resolve) => second.once('exit', resolve));

    expect(exitCode).toBe(1);
    expect(existsSync(live.logFile)).toBe(true);
    expect((await client.readLog(live.releaseId)).text).toContain('==> live');
    expect((await runtime().get('svc-first-supervisor')).status).toBe(200);
  });
});

describe('a supervisor outliving the deployments service', () => {
  const runtime = useRunning(() => startTestRuntime());

  it('keeps apps a client started serving after that client exits, and a new client adopts them', async () => {
    const supervisorPid = await runtime().client.ping();
    const spec = testRelease('svc-adopt', 'v1');
    // A stand-in for the deployments service: its own process, a client of the same runtime.
    const script = `
      const { connectLocalRuntime } = require(${JSON.stringify(require.resolve('../../../dist/runtime/local/client.js'))});
      connectLocalRuntime(${JSON.stringify({ runtimeDir: runtime().runtimeDir, routerPort: runtime().routerPort })})
        .then((client) => client.deploy(${JSON.stringify(spec)}))
        .then((release) => { console.log(release.state); process.exit(0); });`;
    const service = spawn(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    service.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const exitCode = await new Promise((resolve) => service.once('exit', resolve));
    expect({ exitCode, printed: printed.trim() }).toEqual({ exitCode: 0, printed: 'live' });

    const adopted = await connectLocalRuntime({
      runtimeDir: runtime().runtimeDir,
      routerPort: runtime().routerPort,
    });

    expect(await adopted.ping()).toBe(supervisorPid);
    expect(await adopted.list()).toEqual(
      expect.arrayContaining([expect.objectContaining({ releaseId: spec.releaseId, live: true })]),
    );
    expect(await versionAt(runtime(), 'svc-adopt')).toEqual({ status: 200, version: 'v1' });
  });
});
