import type { Deployment } from '../deployments/deployments.repository';
import type { PhaseTimer } from './phase-timer';

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
  /**
   * After the abort: true when the step will run again (the worker shuts down or lost its lease),
   * so what it started is left for the next run rather than undone.
   */
  runsAgain(): boolean;
  /** Marks the end of each phase of the step (the step's `step timings` log line). */
  timer: PhaseTimer;
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
