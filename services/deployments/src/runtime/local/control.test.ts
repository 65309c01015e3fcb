import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, testLogger, type TestServer } from '@platform/shared/testing';
import { createControlApp } from './control';
import type { Launcher } from './launcher';
import { testSupervisor } from './testing';

describe('the control API given a release a tenant could have shaped', () => {
  let runtimeDir: string;
  let server: TestServer;
  const launched: string[] = [];
  beforeAll(async () => {
    runtimeDir = mkdtempSync(path.join(tmpdir(), 'rt-control-'));
    // Nothing may start: the launcher only says that it was asked.
    const launcher: Launcher = {
      start: async (spec) => {
        launched.push(spec.command);
        throw new Error('nothing should be launched');
      },
    };
    const supervisor = testSupervisor({ launcher, runtimeDir });
    server = await startTestServer(createControlApp(supervisor, testLogger('control')));
  });
  afterAll(async () => {
    await server.close();
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  const release = (overrides: Record<string, unknown>) => ({
    serviceId: 'svc',
    releaseId: 'svc-1',
    workspace: runtimeDir,
    command: 'node server.js',
    env: { PATH: '/usr/bin', GREETING: 'hi' },
    healthCheckPath: '/healthz',
    healthTimeoutMs: 1_000,
    ...overrides,
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a health check path with NUL', { healthCheckPath: '/h\u0000' }, 'healthCheckPath'],
    ['a health check path with a newline', { healthCheckPath: '/h\nHost: x' }, 'healthCheckPath'],
    [
      'a health check path with CR LF',
      { healthCheckPath: '/h HTTP/1.1\r\nX: 1' },
      'healthCheckPath',
    ],
    ['a health check path with a leading dash', { healthCheckPath: '-h' }, 'healthCheckPath'],
    ['an env name with NUL', { env: { 'X\u0000--ro-bind': 'x' } }, 'env'],
    ['an env name with a newline', { env: { 'X\nY': 'x' } }, 'env'],
    ['an env name with a leading dash', { env: { '--bind': 'x' } }, 'env'],
    ['an env name with =', { env: { 'A=B': 'x' } }, 'env'],
    ['an env value with NUL', { env: { X: 'x\u0000--ro-bind\u0000/\u0000/host' } }, 'env'],
    ['a command with NUL', { command: 'node\u0000--bind' }, 'command'],
    ['a command with a carriage return', { command: 'node\r' }, 'command'],
    ['a root directory with NUL', { rootDirectory: 'a\u0000b' }, 'rootDirectory'],
    ['a root directory with a newline', { rootDirectory: 'a\nb' }, 'rootDirectory'],
    ['a workspace with NUL', { workspace: '/tmp/a\u0000b' }, 'workspace'],
    ['replicas over 10', { replicas: 11 }, 'replicas'],
    ['replicas of 0', { replicas: 0 }, 'replicas'],
  ])('refuses %s: 400, nothing launched', async (_case, overrides, field) => {
    const response = await fetch(`${server.url}/releases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(release(overrides)),
    });

    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; details: { path: string }[] };
    expect(body.error).toBe('VALIDATION_ERROR');
    // An env entry's path is `env.<name>`: the name itself may be what is refused.
    expect(body.details.map((detail) => detail.path.split('.')[0])).toContain(field);
    expect(launched).toEqual([]);
  });
});
