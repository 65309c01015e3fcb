import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Scheduler } from '@platform/shared';
import { testLogger, useRunning, waitFor } from '@platform/shared/testing';
import { RuntimeClient, RuntimeError } from './client';
import { controlSocketOf } from './supervisor.config';
import { startTestRuntime, testRelease } from './testing';

describe('an app that fails in its own way, in the local runtime', () => {
  const runtime = useRunning(() => startTestRuntime());

  it('keeps the supervisor and the app running when the app’s log cannot be written (a full disk)', async () => {
    const { client, runtimeDir } = runtime();
    const pid = await client.ping();
    const spec = testRelease('svc-full-disk', 'v1', {
      command: 'yes "output nobody can keep" | head -n 100000; exec node server.js',
    });
    // Every write of its log fails as on a full disk (ENOSPC).
    symlinkSync('/dev/full', path.join(runtimeDir, 'logs', `${spec.releaseId}.log`));

    const started = await client.start(spec);
    await client.promote(spec.releaseId);

    expect(started.state).toBe('ready');
    expect(await client.ping()).toBe(pid);
    expect((await runtime().get('svc-full-disk')).status).toBe(200);
    // Another release is untouched.
    const other = await client.deploy(testRelease('svc-beside-full-disk', 'v1'));
    expect(other.state).toBe('live');
    expect((await client.readLog(other.releaseId)).text).toContain('==> live');
  });
});

describe('the runtime client', () => {
  let dir: string;
  let server: Server;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-impostor-'));
    // Something on the supervisor's socket that answers, but not with JSON.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not the supervisor</html>');
    });
    await new Promise<void>((resolve) => server.listen(controlSocketOf(dir), resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('rejects an answer that is not JSON instead of throwing it out of its reach', async () => {
    const client = new RuntimeClient(dir);

    const answer = client.list();

    await expect(answer).rejects.toEqual(expect.any(RuntimeError));
    await expect(answer).rejects.toMatchObject({ status: 200, code: 'INVALID_ANSWER' });
  });
});

describe('the runtime client facing a supervisor that hangs', () => {
  let dir: string;
  let server: Server;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-hung-'));
    // Accepts every connection and request, and never answers.
    server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(controlSocketOf(dir), resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives up on each call at its deadline', async () => {
    const client = new RuntimeClient(dir, { timeoutMs: 300, stopMs: 200 });
    const started = Date.now();

    await expect(client.ping()).rejects.toMatchObject({ code: 'TIMEOUT' });
    await expect(
      client.start(testRelease('svc-hung', 'v1', { healthTimeoutMs: 500 })),
    ).rejects.toMatchObject({ code: 'TIMEOUT' });
    await expect(client.stopService('svc-hung')).rejects.toMatchObject({ code: 'TIMEOUT' });

    // 300, 300 + 500 + 200 and 300 + 200 ms: each gave up, none waited much past its deadline.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('lets a watchdog run finish, so that the next one happens', async () => {
    const client = new RuntimeClient(dir, { timeoutMs: 200, stopMs: 200 });
    const scheduler = new Scheduler(testLogger());
    let finished = 0;
    // What the deployments service's watchdog does first on every run.
    scheduler.every({
      name: 'watchdog',
      everyMs: 100,
      run: async () => {
        await client.ping().catch(() => null);
        finished++;
      },
    });

    await waitFor(() => finished >= 2, { timeoutMs: 10_000, what: 'two watchdog runs to finish' });
    await scheduler.stop();
  });
});
