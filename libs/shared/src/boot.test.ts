import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requestJson, waitFor } from './testing';

/**
 * A service as small as can be, booted by runService in a process of its own (the built
 * library, as a service's dist/main.js uses it): one route, and a "database" whose closer reports
 * whether the HTTP port was already closed when it ran.
 */
const SERVICE = `
const { connect } = require('node:net');
const express = require(${JSON.stringify(require.resolve('express'))});
const { z } = require(${JSON.stringify(require.resolve('zod'))});
const { runService } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'index.js'))});
const portOpen = (port) => new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1');
  socket.on('connect', () => { socket.destroy(); resolve(true); });
  socket.on('error', () => resolve(false));
});
runService({
  name: 'boot-test',
  configSchema: z.object({
    PORT: z.coerce.number().int(),
    HOST: z.string().optional(),
    LOG_LEVEL: z.string().default('info'),
    FAIL_AT_START: z.string().optional(),
  }),
  async compose(config, { lifecycle }) {
    lifecycle.onShutdown('database', async () => {
      console.log(JSON.stringify({ closed: 'database', httpStillOpen: await portOpen(config.PORT) }));
    });
    if (config.FAIL_AT_START) throw new Error('the database refused us');
    const app = express();
    app.get('/', (_req, res) => res.json({ ok: true }));
    return { app };
  },
});
`;

const scriptDir = mkdtempSync(join(tmpdir(), 'boot-test-'));
const script = join(scriptDir, 'service.js');
writeFileSync(script, SERVICE);
afterAll(() => rmSync(scriptDir, { recursive: true, force: true }));

function boot(env: Record<string, string>) {
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, exited, lines, stderr: () => stderr };
}

describe('runService', () => {
  it('serves once composed, and at SIGTERM closes HTTP before what the app uses, then exits 0', async () => {
    const port = await freePort();
    const service = boot({ PORT: String(port) });
    await waitFor(() => service.lines().some((l) => l.msg === 'boot-test listening'), {
      what: 'the service to listen',
    });
    expect((await requestJson(`http://127.0.0.1:${port}/`)).body).toEqual({ ok: true });

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.lines()).toContainEqual({ closed: 'database', httpStillOpen: false });
  });

  it('prints every configuration problem and exits 1 before opening anything', async () => {
    const service = boot({ PORT: 'eighty', LOG_LEVEL: 'info' });
    expect(await service.exited).toBe(1);
    expect(service.stderr()).toMatch(/^config: PORT: /m);
    expect(service.lines()).toEqual([]);
  });

  it('closes what was opened and exits 1 when composing fails', async () => {
    const service = boot({ PORT: String(await freePort()), FAIL_AT_START: 'yes' });
    expect(await service.exited).toBe(1);
    const lines = service.lines();
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'start-up failed' }));
    expect(lines).toContainEqual({ closed: 'database', httpStillOpen: false });
  });
});

/** This machine's first IPv4 address other than loopback (eth0's, here in 192.0.2.0/24). */
function hostAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (!address) throw new Error('this machine has no IPv4 address besides loopback to test with');
  return address;
}

/** Whether a TCP connection to host:port is accepted ('refused' when nothing listens there). */
function tryConnect(host: string, port: number): Promise<'accepted' | 'refused'> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('accepted');
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNREFUSED' ? resolve('refused') : reject(err),
    );
  });
}

describe('where runService listens', () => {
  async function listening(env: Record<string, string>) {
    const port = await freePort();
    const service = boot({ PORT: String(port), ...env });
    await waitFor(() => service.lines().some((l) => l.msg === 'boot-test listening'), {
      what: 'the service to listen',
    });
    return { port, service };
  }

  it('listens on 127.0.0.1 only by default: the host’s other addresses refuse the connection', async () => {
    const { port, service } = await listening({});
    try {
      expect(await tryConnect('127.0.0.1', port)).toBe('accepted');
      expect(await tryConnect(hostAddress(), port)).toBe('refused');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });

  it('listens on every address with HOST=0.0.0.0 (containers)', async () => {
    const { port, service } = await listening({ HOST: '0.0.0.0' });
    try {
      expect(await tryConnect(hostAddress(), port)).toBe('accepted');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });
});
