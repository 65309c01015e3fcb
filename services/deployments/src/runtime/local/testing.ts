import { Agent, request } from 'node:http';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, testLogger, waitFor } from '@platform/shared/testing';
import { connectLocalRuntime, type RuntimeClient } from './client';
import type { ReleaseSpec } from './release';
import { Supervisor, type SupervisorOptions } from './supervisor';

/**
 * A tiny app as a kept build would hold it (until the git fixture's app is used): answers
 * `GET /` with its VERSION, pid and the address it was reached at, `/slow?ms=N` the same N ms
 * later, `/healthz` 200 (500 with UNHEALTHY set, 503 until HEALTHY_AFTER_MS after start),
 * `/crash` by exiting 3, `POST /echo` by streaming the body back; exits 3 CRASH_AFTER_MS after
 * start when set.
 */
const APP_SOURCE = `
const http = require('node:http');
const started = Date.now();
if (process.env.CRASH_AFTER_MS) setTimeout(() => process.exit(3), Number(process.env.CRASH_AFTER_MS));
http.createServer((req, res) => {
  if (req.url === '/healthz') {
    const waiting = Date.now() - started < Number(process.env.HEALTHY_AFTER_MS ?? 0);
    res.writeHead(process.env.UNHEALTHY ? 500 : waiting ? 503 : 200).end('ok');
  } else if (req.url === '/crash') {
    process.exit(3);
  } else if (req.url.startsWith('/slow')) {
    setTimeout(() => res.end(JSON.stringify({ version: process.env.VERSION })), Number(req.url.split('=')[1]));
  } else if (req.url === '/echo') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    req.pipe(res);
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    const address = req.socket.localAddress.replace(/^::ffff:/, '');
    res.end(JSON.stringify({ version: process.env.VERSION, pid: process.pid, address }));
  }
}).listen(Number(process.env.PORT), () => console.log('listening on ' + process.env.PORT));
`;

const workspaces: string[] = [];

/**
 * A fresh build directory holding the test app, as a kept build is (root's, readable by every
 * uid: the app runs it read-only); removed when the test runtime closes.
 */
export function writeTestApp(): string {
  const workspace = mkdtempSync(path.join(tmpdir(), 'rt-app-'));
  chmodSync(workspace, 0o755);
  writeFileSync(path.join(workspace, 'server.js'), APP_SOURCE, { mode: 0o644 });
  workspaces.push(workspace);
  return workspace;
}

/**
 * A supervisor in this process for a test: restarts after 100 ms (at most 1 s), up to 5 in a
 * minute, 2 s of grace, 1 s to drain, the default log bounds, a minute's retention; `options`
 * name its launcher and directory and change any of these.
 */
export function testSupervisor(
  options: Pick<SupervisorOptions, 'launcher' | 'runtimeDir'> & Partial<SupervisorOptions>,
): Supervisor {
  return new Supervisor({
    logger: testLogger('supervisor'),
    restart: { initialDelayMs: 100, maxDelayMs: 1_000, limit: 5, windowMs: 60_000 },
    stopGraceMs: 2_000,
    drainTimeoutMs: 1_000,
    logLimits: { maxLineBytes: 16 * 1024, maxBytes: 1024 * 1024 },
    retentionMs: 60_000,
    ...options,
  });
}

let releases = 0;

/** A release of the test app: `VERSION=version`, health at /healthz, 10 s to get healthy. */
export function testRelease(
  serviceId: string,
  version: string,
  overrides: Partial<ReleaseSpec> & { appEnv?: Record<string, string> } = {},
): ReleaseSpec {
  const { appEnv, ...spec } = overrides;
  return {
    serviceId,
    releaseId: `${serviceId}-${version}-${++releases}`,
    workspace: writeTestApp(),
    command: `exec node server.js`,
    env: { PATH: process.env.PATH!, VERSION: version, ...appEnv },
    healthCheckPath: '/healthz',
    healthTimeoutMs: 10_000,
    ...spec,
  };
}

export interface TestRuntime {
  runtimeDir: string;
  routerPort: number;
  /** The settings the supervisor was started with (RUNTIME_*). */
  env: Record<string, string>;
  client: RuntimeClient;
  /** GET (or another method) on the router with `Host: <serviceId>.localhost`. */
  get(
    serviceId: string,
    urlPath?: string,
    init?: { method?: string; body?: string },
  ): Promise<Answer>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  body: string;
}

/**
 * A supervisor of its own (a real detached process started the way the deployments service
 * starts it), in a temporary RUNTIME_DIR with a free router port. close() stops it with
 * SIGTERM (its apps go with it), waits until it is gone and removes the directory.
 */
export async function startTestRuntime(env: Record<string, string> = {}): Promise<TestRuntime> {
  const runtimeDir = mkdtempSync(path.join(tmpdir(), 'rt-'));
  const routerPort = await freePort();
  const settings = {
    LOG_LEVEL: 'warn',
    RUNTIME_STOP_GRACE: '2s',
    RUNTIME_RESTART_BACKOFF: '100ms',
    // The egress rules are the host's: a supervisor started without the allowed ranges would
    // replace them for every sandbox on this machine (a build's npm install among them).
    ...(process.env.SANDBOX_EGRESS_ALLOW && {
      SANDBOX_EGRESS_ALLOW: process.env.SANDBOX_EGRESS_ALLOW,
    }),
    ...env,
  };
  const client = await connectLocalRuntime({ runtimeDir, routerPort, env: settings }).catch(
    (err: unknown) => {
      rmSync(runtimeDir, { recursive: true, force: true });
      throw err;
    },
  );
  const agent = new Agent({ keepAlive: true });
  return {
    runtimeDir,
    routerPort,
    env: settings,
    client,
    get: (serviceId, urlPath = '/', init = {}) =>
      routerRequest(routerPort, agent, serviceId, urlPath, init),
    async close() {
      agent.destroy();
      await stopSupervisor(client);
      for (const dir of [runtimeDir, ...workspaces.splice(0)]) {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Runs `test` with a runtime of its own (`env` as for startTestRuntime), closed after it, pass or fail. */
export async function withTestRuntime(
  env: Record<string, string>,
  test: (runtime: TestRuntime) => Promise<void>,
): Promise<void> {
  const runtime = await startTestRuntime(env);
  try {
    await test(runtime);
  } finally {
    await runtime.close();
  }
}

/** SIGTERM to the supervisor answering `client`, then waits until its process is gone. */
export async function stopSupervisor(client: RuntimeClient): Promise<void> {
  const pid = await client.ping().catch(() => null);
  if (!pid) return;
  process.kill(pid, 'SIGTERM');
  await waitFor(() => !isRunning(pid), { timeoutMs: 20_000, what: `supervisor ${pid} to exit` });
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `GET urlPath` on the router at `port` as `http://<serviceId>.localhost` (no kept connection). */
export function routerGet(port: number, serviceId: string, urlPath = '/'): Promise<Answer> {
  return routerRequest(port, undefined, serviceId, urlPath, {});
}

function routerRequest(
  port: number,
  agent: Agent | undefined,
  serviceId: string,
  urlPath: string,
  init: { method?: string; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: init.method ?? 'GET',
        agent,
        headers: { host: `${serviceId}.localhost:8080` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Requests the service's URL in `lanes` loops until stop() is called; every answer or error is
 * recorded, in order, per loop.
 */
export function probe(runtime: TestRuntime, serviceId: string, lanes = 4) {
  let running = true;
  const answers: (string | Error)[][] = [];
  const loops = Array.from({ length: lanes }, async (_, lane) => {
    const seen: (string | Error)[] = (answers[lane] = []);
    while (running) {
      try {
        const { status, body } = await runtime.get(serviceId);
        seen.push(
          status === 200
            ? (JSON.parse(body) as { version: string }).version
            : new Error(`${status} ${body}`),
        );
      } catch (err) {
        seen.push(err as Error);
      }
    }
  });
  return {
    /** Answers so far, all lanes together. */
    count: () => answers.reduce((sum, lane) => sum + lane.length, 0),
    /** Stops probing; resolves with every lane's answers (versions, or errors). */
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}
