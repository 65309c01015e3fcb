import {
  sourceProblem,
  variableSecretContext,
  variableValueProblem,
  type LocalSourcePolicy,
  type SecretBox,
} from '@platform/shared';
import type { BuildDirectory, BuildRef, BuildStore } from '../builds/build-store';
import type { Deployment } from '../deployments/deployments.repository';
import type { ReleaseSpec, RuntimeClient } from '../runtime/local/client';
import type { Sandbox, SandboxLimits, SandboxResult } from '../sandbox/sandbox';
import { fetchCommit } from '../source/fetch-commit';
import { SourceError } from '../source/source-error';
import type { SourceSnapshot, SourceSnapshots } from '../source/snapshot';
import { SecretMask } from './secret-mask';

/** What a step gets from the run that holds the deployment. */
export interface StepContext {
  deployment: Deployment;
  /** The claim's number: a re-run of the step (another worker, after a restart) has another. */
  attempt: number;
  /** What the step's processes printed, already masked. */
  output(text: string): void;
  /** A line of the platform's own. */
  line(text: string): void;
  /** Aborted when the run is interrupted (cancelled, superseded, shutting down, lease lost). */
  signal: AbortSignal;
}

/** Where a deployed app's log goes on: its release, and how much of it the deployment has. */
export interface ReleaseLog {
  releaseId: string;
  offset: number;
}

/**
 * A step's end: done (a deploy says where its app's log goes on, for LiveLogs), or failed with
 * the line the log ends with.
 */
export type StepOutcome = { ok: true; releaseLog?: ReleaseLog } | { ok: false; reason: string };

/** BUILDING and DEPLOYING: what the pipeline worker runs for each (contracts.md). */
export interface DeploymentSteps {
  build(context: StepContext): Promise<StepOutcome>;
  deploy(context: StepContext): Promise<StepOutcome>;
}

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

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const formatBytes = (bytes: number) =>
  bytes >= 1024 ** 3
    ? `${+(bytes / 1024 ** 3).toFixed(2)} GiB`
    : `${+(bytes / 1024 ** 2).toFixed(1)} MiB`;
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
    const source = await this.sourceOf(d);
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
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
    source: SourceSnapshot & { repository: string },
  ): Promise<StepOutcome> {
    const { deployment: d, signal } = context;
    const { builds, buildLimits } = this.options;
    try {
      await fetchCommit({
        repository: source.repository,
        branch: source.branch,
        commitHash: d.commitHash,
        into: workspace,
        sources: this.options.sources,
        timeoutMs: this.options.fetchTimeoutMs,
        onLog: (line) => context.line(line),
        signal,
      });
    } catch (err) {
      if (err instanceof SourceError) return failed(err.message);
      throw err;
    }
    if (signal.aborted) return failed('The build step was stopped.');

    if (source.buildCommand) {
      context.line(`==> running the build command: ${source.buildCommand}`);
      const mask = new SecretMask(this.secretValues(d, source));
      // Called from the build's output stream, where a throw would end the service: it ends
      // this build instead.
      const outputFailed = new AbortController();
      let outputError: Error | undefined;
      const result = await this.options.sandbox.run({
        workspace,
        cwd: source.rootDirectory,
        command: source.buildCommand,
        env: this.environmentOf(d, source),
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
      if (outputError) {
        return failed(
          `The build’s output could not be handled (${outputError.message}): the build was stopped.`,
        );
      }
      context.output(mask.flush());
      if (result.exitCode !== 0) {
        if (await builds.isFull(refOf(d))) return failed(this.diskFull());
        return failed(this.buildFailure(result));
      }
    } else {
      context.line('==> no build command: the checkout is the build');
    }
    const live = await this.options.liveBuildOf(d.serviceId);
    await builds.markSuccessful(refOf(d), {
      commitHash: d.commitHash,
      protect: live ? [live] : [],
    });
    return { ok: true };
  }

  async deploy(context: StepContext): Promise<StepOutcome> {
    const { deployment: d, signal } = context;
    const source = await this.sourceOf(d);
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
    if (!source.startCommand) return failed('the service has no start command');
    const build = await this.options.builds.find(refOf(d, source.buildOf ?? d.id));
    if (!build) return failed('The build of this deployment is no longer kept.');
    await this.options.builds.open(build);

    const { runtime } = this.options;
    const releaseId = releaseIdOf(d.id, context.attempt);
    const mask = new SecretMask(this.secretValues(d, source));
    const stopOnAbort = () => void runtime.stopRelease(releaseId).catch(() => undefined);
    signal.addEventListener('abort', stopOnAbort, { once: true });
    const following = this.followLog(runtime, releaseId, (text) =>
      context.output(mask.write(text)),
    );
    try {
      const started = await runtime.start(
        this.releaseOf(d, source, build.workspace, source.startCommand, releaseId),
      );
      await following.stop();
      context.output(mask.flush());
      if (signal.aborted || started.state === 'stopped')
        return failed('The deploy step was stopped.');
      if (started.state !== 'ready') {
        return failed(started.failure ?? `The app did not become healthy (${started.state}).`);
      }
      signal.removeEventListener('abort', stopOnAbort);
      const { previous } = await runtime.promote(releaseId);
      const offset = await following.stop();
      context.output(mask.flush());
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
    const source = await this.sourceOf(d);
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
    await runtime.promote(releaseId);
    return { releaseId, offset: 0 };
  }

  /** What the runtime starts for the deployment: its start command from its build. */
  private releaseOf(
    d: Deployment,
    source: SourceSnapshot,
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
      env: this.environmentOf(d, source),
      healthCheckPath: source.healthCheckPath,
      healthTimeoutMs: this.options.healthTimeoutMs,
    };
  }

  /** The deployment's environment: PLATFORM_*, a minimal PATH and HOME, and its variables. */
  private environmentOf(d: Deployment, source: SourceSnapshot): Record<string, string> {
    const env: Record<string, string> = {
      PATH: this.options.sandbox.defaultPath,
      HOME: '/workspace',
    };
    for (const variable of source.variables) {
      env[variable.name] = variable.secret
        ? this.options.secretBox.open(
            variable.sealed,
            variableSecretContext(d.serviceId, variable.name),
          )
        : variable.value;
    }
    // Last, so no variable can change them (the names are reserved: projects refuses them).
    return {
      ...env,
      PLATFORM_DEPLOYMENT_ID: d.id,
      PLATFORM_SERVICE_ID: d.serviceId,
      PLATFORM_PROJECT_ID: d.projectId,
      PLATFORM_COMMIT_HASH: d.commitHash,
    };
  }

  private secretValues(d: Deployment, source: SourceSnapshot): string[] {
    return source.variables.flatMap((variable) =>
      variable.secret
        ? [
            this.options.secretBox.open(
              variable.sealed,
              variableSecretContext(d.serviceId, variable.name),
            ),
          ]
        : [],
    );
  }

  /**
   * The deployment's snapshot, checked again with the rules the projects service applies
   * (libs/shared source-rules: the snapshot may predate them, or come from a projects service
   * that did not apply them), secret values once opened included. A field that breaks them is
   * the line the deployment fails with, naming it; nothing of it has reached a command line.
   */
  private async sourceOf(d: Deployment): Promise<SourceSnapshot | string | null> {
    const source = await this.options.snapshots.find(d.id);
    if (!source) return null;
    const problem = sourceProblem(source) ?? this.secretProblem(d, source);
    return problem ? `The service's source is refused: ${problem}` : source;
  }

  private secretProblem(d: Deployment, source: SourceSnapshot): string | null {
    for (const [index, variable] of source.variables.entries()) {
      if (!variable.secret) continue;
      const problem = variableValueProblem(
        this.options.secretBox.open(
          variable.sealed,
          variableSecretContext(d.serviceId, variable.name),
        ),
      );
      if (problem) return `variable ${index + 1} ${variable.name} (value): ${problem}`;
    }
    return null;
  }

  private buildFailure(result: SandboxResult): string {
    switch (result.stoppedBy) {
      case 'timeout':
        return `The build command ran longer than ${seconds(this.options.buildLimits.timeoutMs ?? 0)} and was stopped.`;
      case 'limit':
        return `The build command went past its ${this.limitName(result)} and was stopped.`;
      case 'cancel':
        return 'The build step was stopped.';
      default: {
        const ended = result.signal
          ? `The build command was killed by ${result.signal}`
          : `The build command failed with exit code ${result.exitCode}`;
        // A fork refused at the process limit ends a shell on its own: say which limit it met.
        return result.limit ? `${ended}: it reached its ${this.limitName(result)}.` : `${ended}.`;
      }
    }
  }

  private diskFull(): string {
    const { diskBytes } = this.options;
    return `The build filled its disk: its workspace and /tmp hold ${formatBytes(diskBytes)} at most (BUILD_DISK_BYTES).`;
  }

  /** The limit a build went past, as its log names it. */
  private limitName(result: SandboxResult): string {
    const { memoryBytes, processes, cpuSeconds } = this.options.buildLimits;
    switch (result.limit) {
      case 'memory':
        return `memory limit (${formatBytes(memoryBytes)}, BUILD_MEMORY_BYTES)`;
      case 'processes':
        return `process limit (${processes}, BUILD_PROCESSES)`;
      case 'cpu':
        return `CPU time limit (${cpuSeconds} s, BUILD_CPU_SECONDS)`;
      default:
        return `limits (${result.signal ?? 'killed'})`;
    }
  }

  /** Copies the release's log into the deployment's as it grows, until stop(). */
  private followLog(runtime: RuntimeClient, releaseId: string, onText: (text: string) => void) {
    let offset = 0;
    let running = true;
    let wake: (() => void) | undefined;
    const readMore = async () => {
      const { text, nextOffset } = await runtime.readLog(releaseId, offset);
      offset = nextOffset;
      if (text) onText(text);
    };
    const loop = (async () => {
      while (running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.logPollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        await readMore().catch(() => undefined);
      }
    })();
    return {
      /** Stops following once what was written so far has been read; resolves with the offset. */
      async stop(): Promise<number> {
        if (running) {
          running = false;
          wake?.();
          await loop;
        }
        await readMore().catch(() => undefined);
        return offset;
      },
    };
  }
}
