import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useRunning } from '@platform/shared/testing';
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
