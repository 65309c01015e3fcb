import { Agent } from 'node:http';
import type { ServiceSettings } from '@platform/shared';
import { Copy, type CopyInfo } from './copy';
import type { ReleaseLog } from './release-log';

/** One release of a service to start: a kept build and how to run it. */
export interface ReleaseSpec {
  serviceId: string;
  /** Unique across the supervisor's life; the deployment id at integration. */
  releaseId: string;
  /** The kept build, an absolute path. */
  workspace: string;
  /** Where the command runs, relative to `workspace` (rootDirectory); default the workspace. */
  rootDirectory?: string;
  /** The long-running process, run with `sh -c`; it must listen on `$PORT`. */
  command: string;
  /** The app's environment besides `PORT` (variables, PLATFORM_*, a minimal PATH and HOME). */
  env: Record<string, string>;
  /** The names in `env` whose values are secret: the release log shows `****` for them. */
  secretNames?: string[];
  /** `GET` it must answer 2xx or 3xx before the release can be promoted. */
  healthCheckPath: string;
  healthTimeoutMs: number;
  /** How many copies of it serve the service (the setting `replicas`, 1–10); default 1. */
  replicas?: ServiceSettings['replicas'];
}

/**
 * starting: waiting for the health check of every copy. ready: all healthy, not serving yet.
 * live: the URL's release. restarting: no copy serving, one or more started again after a crash
 * (a release with a copy still serving stays ready or live). crashed: gave up restarting every
 * copy. failed: never became healthy (stopped). stopped: replaced or stopped.
 */
export type ReleaseState =
  'starting' | 'ready' | 'live' | 'restarting' | 'crashed' | 'failed' | 'stopped';

/** What the control API says of a release (never its environment: it holds secrets). */
export interface ReleaseInfo {
  serviceId: string;
  releaseId: string;
  state: ReleaseState;
  /** Whether the service's URL routes to it (also while it is restarting after a crash). */
  live: boolean;
  /** How many copies it runs (the service's `replicas`). */
  replicas: number;
  /** Each copy: its process, its own address and PORT, its restarts. */
  copies: CopyInfo[];
  /** The first copy's address, PORT and pid (the only copy's, with one replica). */
  host: string;
  port: number;
  pid: number | null;
  /** Restarts of all its copies together. */
  restarts: number;
  /** Requests the router is forwarding to it right now. */
  inflight: number;
  startedAt: string;
  /** How long its start took: its copies launched (sandboxes made, processes spawned), then healthy. */
  startTimings?: { launchMs: number; healthMs: number };
  /** Why it failed or crashed for good. */
  failure?: string;
  logFile: string;
}

/**
 * A release as the supervisor holds it: its copies (the router picks one per request), its
 * agent and in-flight count.
 */
export class Release {
  state: ReleaseState = 'starting';
  readonly copies: Copy[];
  failure?: string;
  /** When a stopped release is forgotten and its log deleted. */
  expiry?: NodeJS.Timeout;
  stopped?: Promise<void>;
  /** Requests the router is forwarding to it right now. */
  inflight = 0;
  readonly agent = new Agent({ keepAlive: true });
  readonly startedAt = new Date();
  private drained?: () => void;
  /** Where the round robin over its copies goes on from. */
  private nextCopy = 0;
  /** Its deployment's place in its service's order, once promoted with one (newest wins). */
  generation?: string;
  startTimings?: { launchMs: number; healthMs: number };

  constructor(
    public spec: ReleaseSpec,
    readonly log: ReleaseLog,
  ) {
    const replicas = spec.replicas ?? 1;
    this.copies = Array.from({ length: replicas }, (_, index) => new Copy(index, replicas));
  }

  /** The next of its serving copies, round robin; undefined when none is serving. */
  pick(): Copy | undefined {
    const count = this.copies.length;
    for (let step = 0; step < count; step++) {
      const copy = this.copies[(this.nextCopy + step) % count]!;
      if (copy.serving) {
        this.nextCopy = (this.nextCopy + step + 1) % count;
        return copy;
      }
    }
    return undefined;
  }

  /** Stopped: its environment (secret values included) is not kept a moment longer. */
  forgetEnvironment() {
    this.spec = { ...this.spec, env: {}, secretNames: [] };
  }

  get logFile(): string {
    return this.log.file;
  }

  get stopping() {
    return this.state === 'stopped' || this.state === 'failed';
  }

  requestStarted() {
    this.inflight++;
  }

  requestFinished() {
    this.inflight--;
    if (this.inflight === 0) this.drained?.();
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** What the control API tells of it; `live`: its service's URL routes to it. */
  info(live: boolean): ReleaseInfo {
    return {
      serviceId: this.spec.serviceId,
      releaseId: this.spec.releaseId,
      state: this.state,
      live,
      replicas: this.copies.length,
      copies: this.copies.map((copy) => copy.info()),
      host: this.copies[0]!.host,
      port: this.copies[0]!.port,
      pid: this.copies[0]!.process?.pid ?? null,
      restarts: this.copies.reduce((sum, copy) => sum + copy.restarts, 0),
      inflight: this.inflight,
      startedAt: this.startedAt.toISOString(),
      ...(this.startTimings && { startTimings: this.startTimings }),
      ...(this.failure && { failure: this.failure }),
      logFile: this.logFile,
    };
  }

  /** A line of the runtime's own in the release's log. */
  write(line: string) {
    this.log.line(line);
  }

  /** Appends to the release's log; output arriving after its stop is dropped. */
  output(chunk: string) {
    this.log.output(chunk);
  }
}
