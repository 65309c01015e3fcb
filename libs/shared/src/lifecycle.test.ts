import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeHttpServer, Lifecycle } from './lifecycle';
import { testLogger } from './testing';
import { setTimeout as delay } from 'node:timers/promises';

describe('graceful shutdown', () => {
  it('finishes an in-flight request, then refuses new connections', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    const app = express();
    app.get('/slow', async (_req, res) => {
      started();
      await released;
      res.json({ done: true });
    });
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const closed: string[] = [];
    const lifecycle = new Lifecycle(testLogger());
    lifecycle.onShutdown('database', () => closed.push('database'));
    lifecycle.onShutdown('http', async () => {
      await closeHttpServer(server);
      closed.push('http');
    });

    const response = fetch(`${url}/slow`);
    await inFlight;
    const shutdown = lifecycle.shutdown('SIGTERM');
    await delay(50);
    await expect(fetch(`${url}/slow`)).rejects.toThrow();
    release();

    const res = await response;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await shutdown;
    expect(closed).toEqual(['http', 'database']);
  });

  it('closes idle keep-alive connections instead of waiting for them', async () => {
    const app = express();
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await fetch(url)).status).toBe(200); // leaves a keep-alive connection open
    const started = Date.now();
    await closeHttpServer(server, 10_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
