import type { Deployment } from '../deployments/deployments.repository';
import type { DeploymentSteps, StepContext, StepOutcome } from '../pipeline/deployment-steps';
import { startStep, type StepResult } from './step-runner';

export interface ShellStepsOptions {
  /** The build step's shell command, run with `sh -c` (default `true`). */
  build?: string;
  /** The deploy step's (default `true`). */
  deploy?: string;
  timeoutMs: number;
  killGraceMs: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Steps that run a shell command each, as real processes in a process group of their own: what
 * the tests of the pipeline worker's own mechanics (leases, cancels, hand-backs, lost workers)
 * run, so they control exactly how long a step takes and what it prints. The commands get the
 * deployment's values as DEPLOYMENT_ID, SERVICE_ID, PROJECT_ID, COMMIT_HASH and COMMIT_MESSAGE.
 * What the platform really runs (git, the sandbox, the runtime) is LocalSteps, tested in
 * deploying.test.ts.
 */
export class ShellSteps implements DeploymentSteps {
  constructor(private readonly options: ShellStepsOptions) {}

  build(context: StepContext): Promise<StepOutcome> {
    return this.run('build', this.options.build ?? 'true', context);
  }

  deploy(context: StepContext): Promise<StepOutcome> {
    return this.run('deploy', this.options.deploy ?? 'true', context);
  }

  private async run(step: string, command: string, context: StepContext): Promise<StepOutcome> {
    const running = startStep({
      command,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...valuesOf(context.deployment) },
      timeoutMs: this.options.timeoutMs,
      killGraceMs: this.options.killGraceMs,
      onOutput: (text) => context.output(text),
    });
    const stop = () => void running.stop();
    context.signal.addEventListener('abort', stop, { once: true });
    if (context.signal.aborted) stop();
    const result = await running.result;
    context.signal.removeEventListener('abort', stop);
    return outcomeOf(step, result, this.options.timeoutMs);
  }
}

const valuesOf = (d: Deployment) => ({
  DEPLOYMENT_ID: d.id,
  SERVICE_ID: d.serviceId,
  PROJECT_ID: d.projectId,
  COMMIT_HASH: d.commitHash,
  COMMIT_MESSAGE: d.commitMessage,
});

function outcomeOf(step: string, result: StepResult, timeoutMs: number): StepOutcome {
  switch (result.outcome) {
    case 'succeeded':
      return { ok: true };
    case 'failed':
      return {
        ok: false,
        reason:
          result.exitCode !== null
            ? `The ${step} step failed with exit code ${result.exitCode}.`
            : `The ${step} step was killed by ${result.signal ?? 'a signal'}.`,
      };
    case 'timed-out':
      return {
        ok: false,
        reason: `The ${step} step ran longer than ${seconds(timeoutMs)} and was stopped.`,
      };
    case 'spawn-failed':
      return { ok: false, reason: `The ${step} step could not start: ${result.message}` };
    case 'stopped':
      return { ok: false, reason: `The ${step} step was stopped.` };
  }
}
