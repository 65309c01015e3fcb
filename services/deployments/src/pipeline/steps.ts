import type { LocalSourcePolicy, SecretBox } from '@platform/shared';
import type { BuildDirectory, BuildRef, BuildStore } from '../builds/build-store';
import type { Deployment } from '../deployments/deployments.repository';
import type { ReleaseSpec, RuntimeClient } from '../runtime/local/client';
import type { Sandbox, SandboxLimits } from '../sandbox/sandbox';
import type { SourceSnapshots } from '../source/snapshot';
import { buildFailure, diskFull } from './build-failure';
import { fetchSource } from './fetch-source';
import { followReleaseLog } from './release-log-follower';
import { promoteNewestWins } from './promotion';
import { environmentOf, openSource, secretValuesOf, type OpenedSource } from './deployment-source';
import { SecretMask } from './secret-mask';
import type { DeploymentSteps, ReleaseLog, StepContext, StepOutcome } from './deployment-steps';

export interface LocalStepsOptions {
  snapshots: SourceSnapshots;
  builds: BuildStore;
  sandbox: Sandbox;
  /** The runtime the apps run in. */
  runtime: RuntimeClient;
  secretBox: SecretBox;
  /** The build whose app serves the service now: never pruned (see LiveBuilds). */
  liveBuildOf(serviceId: string): Promise<string | null>;
  /** SOURCE_ALLOW_LOCAL, with the platform's own trees (localSourcePolicy). */
  sources: LocalSourcePolicy;
  /** SOURCE_FETCH_TIMEOUT. */
  fetchTimeoutMs: number;
  /** The build command's limits (STEP_TIMEOUT and the BUILD_* limits). */
  buildLimits: SandboxLimits;
  /** BUILD_DISK_BYTES: what a build's workspace and /tmp hold together. */
  diskBytes: number;
  /** HEALTH_CHECK_TIMEOUT. */
  healthTimeoutMs: number;
  /** How often a starting app's output is copied into the deployment's log. */
  logPollMs: number;
}

const failed = (reason: string): StepOutcome => ({ ok: false, reason });
const refOf = (d: Deployment, deploymentId = d.id): BuildRef => ({
  projectId: d.projectId,
  serviceId: d.serviceId,
  deploymentId,
});

/** The runtime's release of one attempt at deploying: unique over the supervisor's life. */
export const releaseIdOf = (deploymentId: string, attempt: number) => `${deploymentId}-${attempt}`;

/**
 * The steps on this machine: the build fetches the commit and runs `buildCommand` in the
 * sandbox, keeping the result in the build store; the deploy starts `startCommand` from that
 * build in the local runtime, waits for its health check and switches the service's URL to it.
 */
export class LocalSteps implements DeploymentSteps {
  constructor(private readonly options: LocalStepsOptions) {}

  async build(context: StepContext): Promise<StepOutcome> {
    const { deployment: d } = context;
    const { builds } = this.options;
    const source = await openSource(d, this.options.snapshots, this.options.secretBox);
    context.timer.mark('source');
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
    if (source.dockerfilePath) {
      return failed(
        `The local runtime does not build Dockerfiles (dockerfilePath ${source.dockerfilePath}): they are built where the platform runs apps on Kubernetes (RUNTIME=kubernetes).`,
      );
    }
    if (source.buildOf) {
      const kept = await builds.find(refOf(d, source.buildOf));
      if (!kept) return failed(`The build of deployment ${source.buildOf} is no longer kept.`);
      context.line(
        `==> reusing the build of deployment ${source.buildOf} (commit ${kept.commitHash}): nothing is built`,
      );
      return { ok: true };
    }
    if (!source.repository) return failed('the service has no repository');

    const dir = await builds.prepare(refOf(d));
    context.timer.mark('disk');
    const outcome = await this.buildIn(dir, context, {
      ...source,
      repository: source.repository,
    }).catch(async (err: unknown) => {
      await builds.discard(refOf(d));
      throw err;
    });
    // A failed or stopped build is no build: its workspace goes at once (a kept one is pruned).
    if (!outcome.ok) await builds.discard(refOf(d));
    return outcome;
  }

  /** Fetches the commit into `workspace` and runs the build command there; keeps the result. */
  private async buildIn(
    { workspace, tmp }: BuildDirectory,
    context: StepContext,
    source: OpenedSource & { repository: string },
  ): Promise<StepOutcome> {
    const { deployment: d, signal } = context;
    const { builds, buildLimits } = this.options;
    const unfetched = await fetchSource(context, source, workspace, this.options);
    context.timer.mark('fetch');
    if (unfetched) return failed(unfetched);

    if (source.buildCommand) {
      context.line(`==> running the build command: ${source.buildCommand}`);
      const mask = new SecretMask(secretValuesOf(source));
      // Called from the build's output stream, where a throw would end the service: it ends
      // this build instead.
      const outputFailed = new AbortController();
      let outputError: Error | undefined;
      const result = await this.options.sandbox.run({
        workspace,
        cwd: source.rootDirectory,
        command: source.buildCommand,
        env: environmentOf(d, source, this.options.sandbox.defaultPath),
        limits: buildLimits,
        network: true,
        onOutput: (chunk) => {
          if (outputError) return;
          try {
            context.output(mask.write(chunk));
          } catch (err) {
            outputError = err as Error;
            outputFailed.abort();
          }
        },
        signal: AbortSignal.any([signal, outputFailed.signal]),
        tmpDir: tmp,
      });
      context.timer.mark('build command');
      if (outputError) {
        return failed(
          `The build’s output could not be handled (${outputError.message}): the build was stopped.`,
        );
      }
      context.output(mask.flush());
      if (result.exitCode !== 0) {
        if (await builds.isFull(refOf(d))) return failed(diskFull(this.options.diskBytes));
        return failed(buildFailure(result, this.options.buildLimits));
      }
    } else {
      context.line('==> no build command: the checkout is the build');
    }
    const live = await this.options.liveBuildOf(d.serviceId);
    await builds.markSuccessful(refOf(d), {
      commitHash: d.commitHash,
      protect: live ? [live] : [],
    });
    context.timer.mark('keep');
    return { ok: true };
  }

  async deploy(context: StepContext): Promise<StepOutcome> {
    const { deployment: d, signal } = context;
    const source = await openSource(d, this.options.snapshots, this.options.secretBox);
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
    if (!source.startCommand) return failed('the service has no start command');
    const build = await this.options.builds.find(refOf(d, source.buildOf ?? d.id));
    if (!build) return failed('The build of this deployment is no longer kept.');
    await this.options.builds.open(build);
    context.timer.mark('source and build');

    const { runtime } = this.options;
    const releaseId = releaseIdOf(d.id, context.attempt);
    const mask = new SecretMask(secretValuesOf(source));
    const stopOnAbort = () => void runtime.stopRelease(releaseId).catch(() => undefined);
    signal.addEventListener('abort', stopOnAbort, { once: true });
    const following = followReleaseLog(
      runtime,
      releaseId,
      (text) => context.output(mask.write(text)),
      this.options.logPollMs,
    );
    try {
      const started = await runtime.start(
        this.releaseOf(d, source, build.workspace, source.startCommand, releaseId),
      );
      context.timer.mark('start and health');
      context.timer.detail(started.startTimings);
      await following.stop();
      context.output(mask.flush());
      context.timer.mark('start log');
      if (signal.aborted || started.state === 'stopped')
        return failed('The deploy step was stopped.');
      if (started.state !== 'ready') {
        return failed(started.failure ?? `The app did not become healthy (${started.state}).`);
      }
      signal.removeEventListener('abort', stopOnAbort);
      const promotion = await promoteNewestWins(runtime, releaseId, d);
      context.timer.mark('switch');
      const offset = await following.stop();
      context.output(mask.flush());
      context.timer.mark('app log');
      if (!promotion.promoted) return failed(`The app was not made live: ${promotion.why}`);
      const { previous } = promotion;
      context.line(
        previous
          ? `==> the service's URL now serves this deployment; the previous one (${previous}) is stopped`
          : `==> the service's URL now serves this deployment`,
      );
      return { ok: true, releaseLog: { releaseId, offset } };
    } finally {
      signal.removeEventListener('abort', stopOnAbort);
      await following.stop();
    }
  }

  /**
   * Starts a DEPLOYED deployment's app again from its kept build, when the runtime runs nothing
   * for its service (the supervisor and its apps stopped: a reboot). Resolves with where the
   * app's log goes on, or null when its service already runs something or it cannot be restored
   * (its build is gone, it does not become healthy: said in `why`).
   */
  async restore(d: Deployment, why: (reason: string) => void): Promise<ReleaseLog | null> {
    const { runtime } = this.options;
    const running = await runtime.list();
    if (running.some((r) => r.serviceId === d.serviceId && r.live)) return null;
    const source = await openSource(d, this.options.snapshots, this.options.secretBox);
    if (typeof source === 'string') {
      why(source);
      return null;
    }
    const build = source && (await this.options.builds.find(refOf(d, source.buildOf ?? d.id)));
    if (!source?.startCommand || !build) {
      why('its build is no longer kept');
      return null;
    }
    await this.options.builds.open(build);
    const releaseId = `${d.id}-restored-${Date.now().toString(36)}`;
    const started = await runtime.start(
      this.releaseOf(d, source, build.workspace, source.startCommand, releaseId),
    );
    if (started.state !== 'ready') {
      why(started.failure ?? `it did not become healthy (${started.state})`);
      return null;
    }
    // A deploy of the service may have made a newer deployment live meanwhile: it stays.
    const promotion = await promoteNewestWins(runtime, releaseId, d);
    if (!promotion.promoted) {
      why(promotion.why);
      return null;
    }
    return { releaseId, offset: 0 };
  }

  /** What the runtime starts for the deployment: its start command from its build. */
  private releaseOf(
    d: Deployment,
    source: OpenedSource,
    workspace: string,
    command: string,
    releaseId: string,
  ): ReleaseSpec {
    return {
      serviceId: d.serviceId,
      releaseId,
      workspace,
      rootDirectory: source.rootDirectory,
      command,
      env: environmentOf(d, source, this.options.sandbox.defaultPath),
      secretNames: source.variables.filter((v) => v.secret).map((v) => v.name),
      healthCheckPath: source.healthCheckPath,
      replicas: source.replicas,
      healthTimeoutMs: this.options.healthTimeoutMs,
    };
  }
}
