import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { conflict, notFound, type Logger } from '@platform/shared';
import { CopyProcesses } from './copy-processes';
import type { RestartPolicy } from './crash-restarts';
import { waitAllHealthy } from './health-check';
import type { Launcher } from './launcher';
import { Release, type ReleaseInfo, type ReleaseSpec } from './release';
import { ReleaseLog, type ReleaseLogLimits } from './release-log';

export type { RestartPolicy } from './crash-restarts';

export interface SupervisorOptions {
  launcher: Launcher;
  /** Release logs are written under `<runtimeDir>/logs/`. */
  runtimeDir: string;
  logger: Logger;
  restart: RestartPolicy;
  /** After SIGTERM, how long an app gets before SIGKILL. */
  stopGraceMs: number;
  /** How long a replaced release may take to finish the requests it is answering. */
  drainTimeoutMs: number;
  /** Each release log's bounds (LOG_LINE_MAX_BYTES, RUNTIME_LOG_MAX_BYTES). */
  logLimits: ReleaseLogLimits;
  /**
   * RUNTIME_RELEASE_RETENTION: how long a stopped or failed release is still described and its
   * log read; then it is forgotten and its log deleted.
   */
  retentionMs: number;
}

/**
 * The local runtime's state: every release the supervisor started (each `replicas` copies,
 * copy-processes.ts), which one each service's URL routes to, the health gate, the switch and the
 * release logs. Lives in the
 * supervisor process (supervisor-main.ts), which outlives the deployments service. A release
 * that stopped or failed lets go of its environment (secret values included) at once, and is
 * forgotten with its log `retentionMs` later; the logs of an earlier supervisor's releases (which
 * no API serves) are deleted when it starts.
 */
export class Supervisor {
  private readonly releases = new Map<string, Release>();
  private readonly liveByService = new Map<string, Release>();
  private readonly logDir: string;
  private readonly copies: CopyProcesses;

  constructor(private readonly options: SupervisorOptions) {
    this.copies = new CopyProcesses(options, (release) => this.isLive(release));
    this.logDir = path.join(options.runtimeDir, 'logs');
    rmSync(this.logDir, { recursive: true, force: true });
    mkdirSync(this.logDir, { recursive: true });
  }

  /**
   * Starts a release's copies, each in a sandbox of its own, and waits for the health check of
   * every one. Resolves with its state `ready` (promote it next) or `failed` (every copy stopped,
   * `failure` says why, the live release untouched).
   */
  async start(spec: ReleaseSpec): Promise<ReleaseInfo> {
    if (this.releases.has(spec.releaseId)) {
      throw conflict(`Release ${spec.releaseId} was started already.`);
    }
    const logFile = path.join(this.logDir, `${spec.releaseId}.log`);
    const secrets = (spec.secretNames ?? []).flatMap((name) => spec.env[name] ?? []);
    const log = new ReleaseLog(logFile, this.options.logLimits, secrets, (err) =>
      this.options.logger.warn(
        { releaseId: spec.releaseId, err: err.message },
        'the release log cannot be written: its output is lost',
      ),
    );
    const release = new Release(spec, log);
    // Known from here on (a stop or a second start with its id sees it), before any wait.
    this.releases.set(spec.releaseId, release);
    const count = release.copies.length;
    release.write(`starting \`${spec.command}\`${count > 1 ? ` (${count} copies)` : ''}`);
    const began = performance.now();
    try {
      await Promise.all(release.copies.map((copy) => this.copies.launch(release, copy)));
    } catch (err) {
      await this.fail(release, `could not start: ${(err as Error).message}`);
      return this.info(release);
    }
    const launched = performance.now();
    const failure =
      (await waitAllHealthy(release, (copy) => {
        if (count > 1) release.write(`${copy.label}healthy`);
      })) ??
      // A copy that passed, then exited while another was still being checked.
      release.copies
        .filter((copy) => !copy.process)
        .map((copy) => `${copy.label}exited after it answered healthy`)[0];
    const tenths = (ms: number) => Math.round(ms * 10) / 10;
    release.startTimings = {
      launchMs: tenths(launched - began),
      healthMs: tenths(performance.now() - launched),
    };
    if (failure) await this.fail(release, failure);
    else {
      release.state = 'ready';
      for (const copy of release.copies) copy.state = 'running';
      const all = count > 1 ? ` by all ${count} copies` : '';
      release.write(`healthy: GET ${spec.healthCheckPath} answered${all}`);
    }
    return this.info(release);
  }

  /**
   * Switches the service's URL to a ready release, then lets the previous live one finish its
   * requests and stops it. Resolves once the previous release is stopped. With a `generation`
   * (its deployment's place in its service's order), newest wins: a release older than the live
   * one is refused (409), whatever order the promotions come in.
   */
  async promote(
    releaseId: string,
    generation?: string,
  ): Promise<{ release: ReleaseInfo; previous: string | null }> {
    const release = this.get(releaseId);
    const current = this.liveByService.get(release.spec.serviceId);
    if (current === release) return { release: this.info(release), previous: null };
    if (release.state !== 'ready') {
      throw conflict(`Release ${releaseId} is ${release.state}: only a ready release is promoted.`);
    }
    const liveGeneration = current?.generation;
    if (generation !== undefined && liveGeneration !== undefined && generation < liveGeneration) {
      throw conflict(
        `Release ${releaseId} is of an older deployment than the live ${current!.spec.releaseId}: the newest stays live.`,
      );
    }
    if (generation !== undefined) release.generation = generation;
    this.liveByService.set(release.spec.serviceId, release);
    release.state = 'live';
    release.write('live: the service URL routes to this release');
    if (current) {
      current.write(`replaced by ${releaseId}`);
      await this.stop(current);
    }
    return { release: this.info(release), previous: current?.spec.releaseId ?? null };
  }

  /** Stops one release; a live one takes its service's URL down with it. */
  async stopRelease(releaseId: string): Promise<void> {
    await this.stop(this.get(releaseId));
  }

  /** Stops every release of a service: its URL answers 404 and its ports are free. */
  async stopService(serviceId: string): Promise<void> {
    const ofService = [...this.releases.values()].filter((r) => r.spec.serviceId === serviceId);
    await Promise.all(ofService.map((release) => this.stop(release)));
  }

  /** The releases that are not stopped, oldest first. */
  list(): ReleaseInfo[] {
    return [...this.releases.values()]
      .filter((release) => release.state !== 'stopped' && release.state !== 'failed')
      .map((release) => this.info(release));
  }

  describe(releaseId: string): ReleaseInfo {
    return this.info(this.get(releaseId));
  }

  /** Up to `maxBytes` of a release's log from `offset` (ReleaseLog.read). */
  readLog(releaseId: string, offset: number, maxBytes: number) {
    return this.get(releaseId).log.read(offset, maxBytes);
  }

  /** The release the service's URL routes to, for the router. */
  liveRelease(serviceId: string): Release | undefined {
    return this.liveByService.get(serviceId);
  }

  /** Stops everything (the supervisor's shutdown); the logs stay until the next one starts. */
  async close(): Promise<void> {
    await Promise.all([...this.releases.values()].map((release) => this.stop(release)));
    for (const release of this.releases.values()) clearTimeout(release.expiry);
  }

  private get(releaseId: string): Release {
    const release = this.releases.get(releaseId);
    if (!release) throw notFound('Release');
    return release;
  }

  private isLive(release: Release): boolean {
    return this.liveByService.get(release.spec.serviceId) === release;
  }

  private info(release: Release): ReleaseInfo {
    return release.info(this.isLive(release));
  }

  private async fail(release: Release, failure: string) {
    release.failure = failure;
    release.write(`failed: ${failure}`);
    await this.stop(release, 'failed');
  }

  /** Takes the release off its URL, lets its requests finish, stops it; once, however called. */
  private stop(release: Release, finalState: 'stopped' | 'failed' = 'stopped'): Promise<void> {
    if (!release.stopping) release.state = finalState;
    // A crashed copy stopped during its restart delay is not started again.
    for (const copy of release.copies) clearTimeout(copy.restartTimer);
    if (this.liveByService.get(release.spec.serviceId) === release) {
      this.liveByService.delete(release.spec.serviceId);
    }
    release.stopped ??= this.stopProcess(release);
    return release.stopped;
  }

  private async stopProcess(release: Release): Promise<void> {
    await release.drain(this.options.drainTimeoutMs);
    await Promise.all(release.copies.map((copy) => this.copies.stop(release, copy)));
    release.agent.destroy();
    release.forgetEnvironment();
    await release.log.end();
    release.expiry = setTimeout(() => void this.forget(release), this.options.retentionMs);
    release.expiry.unref();
  }

  /** A release gone for `retentionMs`: no longer described, its log deleted. */
  private async forget(release: Release): Promise<void> {
    if (this.releases.get(release.spec.releaseId) === release) {
      this.releases.delete(release.spec.releaseId);
    }
    await release.log
      .remove()
      .catch((err: Error) =>
        this.options.logger.warn(
          { releaseId: release.spec.releaseId, err: err.message },
          'could not delete the log of a release gone',
        ),
      );
  }
}
