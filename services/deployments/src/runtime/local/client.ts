import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import type { AppLogs } from '../app-logs';
import type { ReleaseInfo, ReleaseSpec } from './release';
import { setTimeout as delay } from 'node:timers/promises';
import { controlSocketOf, runtimeEnv } from './supervisor.config';

export type { ReleaseInfo, ReleaseSpec, ReleaseState } from './release';

/** The compiled supervisor, started with `node` (run `tsc -b` first; tests do). */
export const SUPERVISOR_MAIN = path.resolve(
  __dirname,
  '../../../dist/runtime/local/supervisor-main.js',
);

/** An answer of the control API other than the one expected. */
export class RuntimeError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeError';
  }
}

/** How long the client waits for the supervisor's answers. */
export interface RuntimeClientDeadlines {
  /** RUNTIME_CONTROL_TIMEOUT: a call that waits for nothing (ping, describe, list, readLog). */
  timeoutMs: number;
  /** The longest a release's stop takes (RUNTIME_DRAIN_TIMEOUT + RUNTIME_STOP_GRACE). */
  stopMs: number;
}

const DEFAULT_DEADLINES: RuntimeClientDeadlines = { timeoutMs: 10_000, stopMs: 15_000 };

/**
 * The deployments service's side of the local runtime: typed calls to the supervisor's control
 * API over its unix socket. Each call is one request; none keeps state, so a client made after a
 * restart of the deployments service sees (re-adopts) everything the supervisor runs. Every call
 * has a deadline (RuntimeError TIMEOUT): a supervisor that hangs cannot hang its caller. A call
 * that waits for an app gets what it waits for on top (a start its health check's time and a
 * stop's, a promote or stop a stop's).
 */
export class RuntimeClient implements AppLogs {
  readonly socketPath: string;
  private readonly deadlines: RuntimeClientDeadlines;

  constructor(
    readonly runtimeDir: string,
    deadlines: Partial<RuntimeClientDeadlines> = {},
  ) {
    this.socketPath = controlSocketOf(runtimeDir);
    this.deadlines = { ...DEFAULT_DEADLINES, ...deadlines };
  }

  /** The supervisor's pid, or throws when nothing answers (in time). */
  async ping(): Promise<number> {
    return (await this.call<{ pid: number }>('GET', '/healthz')).pid;
  }

  /**
   * Starts a release on a free port and waits for `GET healthCheckPath` to answer 2xx/3xx
   * within `healthTimeoutMs`. Resolves with state `ready` (promote it), `failed` (stopped
   * already; `failure` says why; what is live is untouched) or `stopped` (stopRelease or
   * stopService was called meanwhile). The release's log is written from its first line: read
   * it with readLog meanwhile.
   */
  start(spec: ReleaseSpec): Promise<ReleaseInfo> {
    return this.call('POST', '/releases', spec, spec.healthTimeoutMs + this.deadlines.stopMs);
  }

  /**
   * Routes the service's URL to a ready release, then stops the previous live one once it has
   * answered its requests. Resolves after that stop, with the previous release's id. With a
   * `generation` (generationOf its deployment), a release older than the live one is refused:
   * RuntimeError 409.
   */
  promote(
    releaseId: string,
    generation?: string,
  ): Promise<{ release: ReleaseInfo; previous: string | null }> {
    const path = `/releases/${encodeURIComponent(releaseId)}/promote`;
    const body = generation === undefined ? undefined : { generation };
    return this.call('POST', path, body, this.deadlines.stopMs);
  }

  /** start, then promote when it became ready: the whole of a deploy. */
  async deploy(spec: ReleaseSpec): Promise<ReleaseInfo> {
    const started = await this.start(spec);
    if (started.state !== 'ready') return started;
    return (await this.promote(spec.releaseId)).release;
  }

  /** One release, stopped or not (404 once the supervisor restarted). */
  describe(releaseId: string): Promise<ReleaseInfo> {
    return this.call('GET', `/releases/${encodeURIComponent(releaseId)}`);
  }

  /** Every release that is not stopped: what the runtime runs. */
  async list(): Promise<ReleaseInfo[]> {
    return (await this.call<{ releases: ReleaseInfo[] }>('GET', '/releases')).releases;
  }

  /** Stops one release (a cancelled start, say); a live one takes the URL down. */
  stopRelease(releaseId: string): Promise<void> {
    const path = `/releases/${encodeURIComponent(releaseId)}`;
    return this.call('DELETE', path, undefined, this.deadlines.stopMs);
  }

  /** Stops every release of a service: its URL answers 404, its ports are free. */
  stopService(serviceId: string): Promise<void> {
    const path = `/services/${encodeURIComponent(serviceId)}`;
    return this.call('DELETE', path, undefined, this.deadlines.stopMs);
  }

  /**
   * The release's log from byte `offset`: what the app printed and the runtime's own `==> `
   * lines (started, exited, restarting in …, gave up). Call again from `nextOffset` to follow.
   */
  readLog(releaseId: string, offset = 0): Promise<{ text: string; nextOffset: number }> {
    return this.call('GET', `/releases/${encodeURIComponent(releaseId)}/log?offset=${offset}`);
  }

  /** One request, given up after RUNTIME_CONTROL_TIMEOUT plus `waitsMs` (what it waits for). */
  private async call<T>(method: string, urlPath: string, body?: unknown, waitsMs = 0): Promise<T> {
    const deadlineMs = this.deadlines.timeoutMs + waitsMs;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      const why = `the runtime supervisor did not answer ${method} ${urlPath} within ${deadlineMs} ms`;
      abort.abort(new RuntimeError(0, 'TIMEOUT', why));
    }, deadlineMs);
    try {
      return await this.request<T>(method, urlPath, body, abort.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private request<T>(method: string, urlPath: string, body: unknown, signal: AbortSignal) {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      // An abort ends the request with an AbortError: the caller hears why (the deadline).
      const fail = (err: Error) => reject(signal.aborted ? (signal.reason as Error) : err);
      const req = request(
        {
          socketPath: this.socketPath,
          method,
          signal,
          path: urlPath,
          headers: payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            let parsed: Record<string, unknown> | undefined;
            try {
              parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
            } catch {
              // Thrown here it would end the process: whatever answered is not the supervisor.
              reject(new RuntimeError(status, 'INVALID_ANSWER', `not JSON: ${text.slice(0, 200)}`));
              return;
            }
            if (status >= 200 && status < 300) resolve(parsed as T);
            else
              reject(
                new RuntimeError(
                  status,
                  String(parsed?.error ?? 'UNKNOWN'),
                  String(parsed?.message ?? text),
                ),
              );
          });
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(payload);
    });
  }
}

export interface ConnectOptions {
  runtimeDir: string;
  routerPort: number;
  /**
   * More of the supervisor's environment (RUNTIME_RESTART_*, RUNTIME_STOP_GRACE, LOG_LEVEL); the
   * client's deadlines come from it too (RUNTIME_CONTROL_TIMEOUT, RUNTIME_DRAIN_TIMEOUT,
   * RUNTIME_STOP_GRACE).
   */
  env?: Record<string, string>;
  /** How long a supervisor started here may take to answer. */
  startTimeoutMs?: number;
}

/**
 * The client of the runtime in `runtimeDir`: the supervisor that answers there (started before
 * this process: re-adopted, its apps untouched), else a new one started detached, in its own
 * session, so it outlives this process. It gets only PATH, HOME and its own settings, never the
 * deployments service's environment. Its output goes to `<runtimeDir>/supervisor.log`.
 */
export async function connectLocalRuntime(options: ConnectOptions): Promise<RuntimeClient> {
  const client = new RuntimeClient(options.runtimeDir, deadlinesOf(options.env ?? {}));
  if (await client.ping().catch(() => null)) return client;

  mkdirSync(options.runtimeDir, { recursive: true, mode: 0o700 });
  const logFd = openSync(path.join(options.runtimeDir, 'supervisor.log'), 'a');
  const child = spawn(process.execPath, [SUPERVISOR_MAIN], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...(process.env.HOME && { HOME: process.env.HOME }),
      ...options.env,
      RUNTIME_DIR: options.runtimeDir,
      RUNTIME_ROUTER_PORT: String(options.routerPort),
    },
  });
  closeSync(logFd);
  child.unref();
  let exitCode: number | null = null;
  child.once('exit', (code) => (exitCode = code ?? -1));

  const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
  for (;;) {
    if (await client.ping().catch(() => null)) return client;
    // Exit 1 with another supervisor answering: a racing start won; use that one.
    if (exitCode !== null && !(await client.ping().catch(() => null))) {
      throw new Error(
        `the runtime supervisor exited with ${exitCode}: see ${path.join(options.runtimeDir, 'supervisor.log')}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the runtime supervisor did not answer on ${client.socketPath} in time: see supervisor.log`,
      );
    }
    await delay(50);
  }
}

/** The client's deadlines from the runtime's settings (each default where it is not set). */
function deadlinesOf(env: Record<string, string>): RuntimeClientDeadlines {
  const settings = runtimeEnv
    .pick({ RUNTIME_CONTROL_TIMEOUT: true, RUNTIME_DRAIN_TIMEOUT: true, RUNTIME_STOP_GRACE: true })
    .parse(env);
  return {
    timeoutMs: settings.RUNTIME_CONTROL_TIMEOUT,
    stopMs: settings.RUNTIME_DRAIN_TIMEOUT + settings.RUNTIME_STOP_GRACE,
  };
}
