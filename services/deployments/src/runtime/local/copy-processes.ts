import path from 'node:path';
import type { Logger } from '@platform/shared';
import type { Copy } from './copy';
import { afterCrash, type RestartPolicy } from './crash-restarts';
import { waitCopyHealthy } from './health-check';
import type { ExitStatus, Launcher } from './launcher';
import type { Release } from './release';

export interface CopyProcessOptions {
  launcher: Launcher;
  logger: Logger;
  restart: RestartPolicy;
  /** After SIGTERM, how long an app gets before SIGKILL. */
  stopGraceMs: number;
}

/**
 * The processes of a release's copies: each started in a sandbox of its own, restarted on its
 * own with backoff when it exits (the others keep serving), stopped with its release. The
 * release's state follows its copies (`settle`).
 */
export class CopyProcesses {
  constructor(
    private readonly options: CopyProcessOptions,
    /** Whether the release's service URL routes to it. */
    private readonly routed: (release: Release) => boolean,
  ) {}

  /** Starts the copy's process; once it runs, its exit is watched. */
  async launch(release: Release, copy: Copy): Promise<void> {
    if (release.stopping) return;
    const { spec } = release;
    const launched = await this.options.launcher.start({
      workspace: spec.workspace,
      cwd: path.join(spec.workspace, spec.rootDirectory ?? ''),
      command: spec.command,
      env: spec.env,
      onOutput: (chunk) => {
        // Called from the process's stream: a throw would end the supervisor, and every app.
        try {
          release.output(chunk);
        } catch (err) {
          this.options.logger.error({ err, releaseId: spec.releaseId }, 'could not log output');
        }
      },
    });
    if (release.stopping) {
      // Stopped while its process was being started: nothing may outlive the stop.
      await launched.stop(this.options.stopGraceMs);
      return;
    }
    copy.process = launched;
    copy.host = launched.host;
    copy.port = launched.port;
    release.write(
      `${copy.label}started, pid ${launched.pid}, PORT ${launched.port} at ${launched.host}`,
    );
    void launched.exited
      .catch((err: Error): ExitStatus => {
        release.write(`${copy.label}lost track of its process: ${err.message}`);
        return { code: null, signal: null };
      })
      .then(({ code, signal, limit }) => {
        if (copy.process !== launched) return;
        release.write(
          `${copy.label}exited with ${signal ? `signal ${signal}` : `code ${code}`}${limit ? `: it went past ${limit}` : ''}`,
        );
        copy.process = null;
        this.onExit(release, copy);
      })
      // Whatever goes wrong with one release stays with it.
      .catch((err: unknown) =>
        this.options.logger.error({ err, releaseId: spec.releaseId }, 'handling an exit failed'),
      );
  }

  /** Stops the copy's process (a restart it was waiting for is not made). */
  async stop(release: Release, copy: Copy): Promise<void> {
    clearTimeout(copy.restartTimer);
    const launched = copy.process;
    if (launched) {
      const { code, signal } = await launched.stop(this.options.stopGraceMs);
      copy.process = null;
      release.write(`${copy.label}stopped (${signal ? `signal ${signal}` : `code ${code}`})`);
    } else release.write(`${copy.label}stopped (it was not running)`);
    copy.state = 'stopped';
  }

  /**
   * A serving release's state from its copies: crashed when every copy was given up on,
   * restarting when none serves, else ready or live.
   */
  settle(release: Release) {
    if (release.stopping || release.state === 'starting') return;
    const { copies } = release;
    if (copies.every((copy) => copy.state === 'crashed')) release.state = 'crashed';
    else if (!copies.some((copy) => copy.serving)) release.state = 'restarting';
    else release.state = this.routed(release) ? 'live' : 'ready';
  }

  /** A copy that ended on its own: restart it with backoff, unless its release was stopped. */
  private onExit(release: Release, copy: Copy) {
    if (release.stopping || release.state === 'starting') return;
    const next = afterCrash(this.options.restart, copy.restartTimes, Date.now());
    if (!next.restart) {
      copy.state = 'crashed';
      release.write(`${copy.label}gave up: ${next.why}`);
      this.options.logger.warn({ releaseId: release.spec.releaseId, copy: copy.index }, next.why);
      if (release.copies.every((c) => c.state === 'crashed')) release.failure = next.why;
      this.settle(release);
      return;
    }
    const { limit, windowMs } = this.options.restart;
    copy.restarts++;
    copy.state = 'restarting';
    this.settle(release);
    release.write(
      `${copy.label}restarting in ${next.delayMs} ms (restart ${next.count} of ${limit} within ${windowMs} ms)`,
    );
    copy.restartTimer = setTimeout(() => {
      copy.restartTimer = undefined;
      this.launch(release, copy).then(
        () => this.serveWhenHealthy(release, copy),
        (err: Error) => {
          release.write(`${copy.label}restart failed: ${err.message}`);
          this.onExit(release, copy);
        },
      );
    }, next.delayMs);
  }

  /**
   * A restarted copy is sent requests again once it answers its health check. One that exits
   * first is restarted by its exit; one that does not answer in time is stopped, which counts
   * as another crash.
   */
  private async serveWhenHealthy(release: Release, copy: Copy) {
    const launched = copy.process;
    if (release.stopping || !launched) return;
    const why = await waitCopyHealthy(release, copy);
    if (release.stopping || copy.process !== launched) return;
    if (why) {
      release.write(`${copy.label}not healthy after its restart: ${why}`);
      await launched.stop(this.options.stopGraceMs);
      return;
    }
    copy.state = 'running';
    release.write(`${copy.label}healthy again: GET ${release.spec.healthCheckPath} answered`);
    this.settle(release);
  }
}
