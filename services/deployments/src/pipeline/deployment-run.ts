import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@platform/shared';
import type { DeploymentsRepository, Deployment } from '../deployments/deployments.repository';
import type { DeploymentStatus } from '../deployments/status';
import { LogBuffer } from './log-buffer';
import { LogWriter } from './log-writer';
import type { Lease, LeaseState, Leases } from './leases';
import type { PipelineWorkerOptions } from './pipeline.options';
import { PhaseTimer } from './phase-timer';
import type { ReleaseLog, StepOutcome } from './deployment-steps';

/** Lost attempts (workers that vanished) after which a deployment is FAILED. */
const MAX_ATTEMPTS = 3;

type Step = 'build' | 'deploy';

const STEP_STATUS: Record<Step, DeploymentStatus> = { build: 'BUILDING', deploy: 'DEPLOYING' };

/** Why a run stopped before its step finished. */
type Interruption =
  { reason: 'deleted' | 'lease-lost' | 'shutdown' } | { reason: 'status-changed'; now: Deployment };

/** What every run of a worker shares. */
export interface RunContext {
  options: Omit<PipelineWorkerOptions, 'models'>;
  workerId: string;
  leases: Leases;
  deployments: DeploymentsRepository;
  logger: Logger;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Output waiting beyond this is written at once, without LOG_FLUSH_DELAY's batching. */
const MAX_BATCH_BYTES = 64 * 1024;

/** One claimed deployment, from its current step to a final status or to giving it up. */
export class DeploymentRun {
  private readonly log: LogWriter;
  private readonly logger: Logger;
  private leaseUntil: number;
  private step?: AbortController;
  private interruption?: Interruption;
  /** Aborted to end the heartbeat's wait early (the step ended, or the run was interrupted). */
  private heartbeatWait?: AbortController;
  /** Where the deployed app's log goes on: written with the last of the deployment's own. */
  private releaseLog?: ReleaseLog;

  constructor(
    private deployment: Deployment,
    private readonly lease: Lease,
    private readonly context: RunContext,
  ) {
    const { logLineMaxBytes, logLimitBytes, logFlushDelayMs, heartbeatMs } = context.options;
    this.leaseUntil = lease.leaseUntil.getTime();
    this.logger = context.logger.child({ deploymentId: deployment.id, attempt: lease.attempt });
    // Half the log's limit: a write that dropped output fits in the log whole, the line counting
    // what it dropped included, with the newest output after it.
    const buffer = new LogBuffer({
      maxLineBytes: logLineMaxBytes,
      maxPendingBytes: Math.floor(logLimitBytes / 2),
    });
    // Output is written as it comes (the lease is renewed on the heartbeat): the log's lines
    // reach its followers within milliseconds.
    this.log = new LogWriter(buffer, {
      write: (text) => context.leases.writeLogs(lease, text, this.releaseLog),
      delayMs: logFlushDelayMs,
      maxBatchBytes: MAX_BATCH_BYTES,
      retryMs: heartbeatMs,
      refused: () => this.interrupt({ reason: 'deleted' }),
      failed: (err) => this.logger.warn({ err: err.message }, 'could not write output to the log'),
    });
  }

  /** Stops the running step; the run then settles according to the reason. */
  interrupt(interruption: Interruption): void {
    this.interruption ??= interruption;
    this.step?.abort();
    this.heartbeatWait?.abort();
  }

  async run(): Promise<void> {
    try {
      await this.runSteps();
    } finally {
      await this.log.close();
    }
  }

  private async runSteps(): Promise<void> {
    const { lostAttempts } = this.lease;
    if (lostAttempts > 0) {
      this.log.line(
        `--- Attempt ${lostAttempts + 1}: the pipeline worker running this deployment stopped responding. ---`,
      );
    }
    if (lostAttempts >= MAX_ATTEMPTS) {
      await this.fail(`Gave up after ${MAX_ATTEMPTS} attempts.`);
      return;
    }
    this.logger.info(
      {
        status: this.deployment.status,
        sinceCreatedMs: Date.now() - this.deployment.createdAt.getTime(),
      },
      'running deployment',
    );
    if (this.deployment.status === 'BUILDING') {
      if (!(await this.runStep('build'))) return;
      if (!(await this.advance('DEPLOYING'))) return;
    }
    if (this.interruption) {
      await this.settleInterrupted('deploy');
      return;
    }
    if (this.deployment.status === 'DEPLOYING') {
      if (!(await this.runStep('deploy'))) return;
      await this.advance('DEPLOYED');
    }
  }

  /** True when the step succeeded; otherwise the run has been settled. */
  private async runStep(step: Step): Promise<boolean> {
    const started = Date.now();
    this.log.line(`==> ${step} step started`);
    const controller = new AbortController();
    this.step = controller;
    if (this.interruption) controller.abort();
    const timer = new PhaseTimer();
    const outcome = this.context.options.steps[step]({
      deployment: this.deployment,
      attempt: this.lease.attempt,
      output: (text) => this.log.append(text),
      line: (text) => this.log.line(text),
      signal: controller.signal,
      runsAgain: () =>
        this.interruption?.reason === 'shutdown' || this.interruption?.reason === 'lease-lost',
      timer,
    });
    let stepDone = false;
    const heartbeat = this.keepLease(step, () => stepDone);
    const result = await outcome.catch((err: unknown): StepOutcome => ({
      ok: false,
      reason: `The ${step} step could not run: ${(err as Error).message}`,
    }));
    stepDone = true;
    this.heartbeatWait?.abort();
    await heartbeat;
    this.step = undefined;
    this.logger.info(
      { step, ok: result.ok, ms: Date.now() - started, phases: timer.phases },
      'step timings',
    );
    if (this.interruption) {
      await this.settleInterrupted(step);
      return false;
    }
    if (result.ok) {
      this.log.line(`==> ${step} step finished in ${seconds(Date.now() - started)}`);
      this.releaseLog = result.releaseLog;
      return true;
    }
    await this.fail(result.reason);
    return false;
  }

  /** Until the step ends: renew the lease, notice a cancel or a lost lease. */
  private async keepLease(step: Step, isDone: () => boolean) {
    const { heartbeatMs } = this.context.options;
    while (!isDone()) {
      this.heartbeatWait = new AbortController();
      await sleep(heartbeatMs, undefined, { signal: this.heartbeatWait.signal }).catch(
        () => undefined,
      );
      this.heartbeatWait = undefined;
      if (isDone() || this.interruption) return;
      await this.beat(step);
    }
  }

  private async beat(step: Step) {
    const { leases, options } = this.context;
    const leaseUntil = Date.now() + options.leaseMs;
    try {
      const state = await leases.renew(this.lease, STEP_STATUS[step], new Date(leaseUntil));
      if (!state.held) return this.interrupt(interruptionOf(state));
      this.leaseUntil = leaseUntil;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not renew the lease');
      // Stop before another worker may take over, so the step never runs twice at once.
      if (Date.now() >= this.leaseUntil - options.heartbeatMs) {
        this.interrupt({ reason: 'lease-lost' });
      }
    }
  }

  /**
   * Writes everything printed so far (a status change or a stop comes next), after the write in
   * flight; false when the deployment is gone (or another claim has it).
   */
  private async saveLogs(): Promise<boolean> {
    return this.log.flush(true);
  }

  /** Records the next status (DEPLOYED, being final, ends the lease with it). */
  private async advance(to: 'DEPLOYING' | 'DEPLOYED'): Promise<boolean> {
    const started = Date.now();
    const updated = await this.recordChange(to);
    if (!updated) return false;
    this.deployment = updated;
    this.logger.info({ status: to, ms: Date.now() - started }, 'deployment moved on');
    return true;
  }

  private async fail(message: string) {
    this.log.line(message);
    const updated = await this.recordChange('FAILED');
    if (!updated) return;
    this.logger.info({ reason: message }, 'deployment failed');
  }

  /**
   * Records a status change while this worker still holds the deployment. Null when it is
   * gone, another worker took over or another change (a cancel) came first; the run is then
   * settled.
   */
  private async recordChange(to: DeploymentStatus): Promise<Deployment | null> {
    const { leases, deployments } = this.context;
    const step: Step = this.deployment.status === 'BUILDING' ? 'build' : 'deploy';
    // The output goes in before the status, so whoever sees the new status sees all of it.
    if (!(await this.saveLogs())) {
      this.interruption ??= { reason: 'deleted' };
    } else {
      const updated = await deployments.changeStatus(this.deployment, to, this.lease);
      if (updated) return updated;
      const state = await leases.whyNotHeld(this.lease);
      this.interruption ??= state.held ? { reason: 'lease-lost' } : interruptionOf(state);
    }
    await this.settleInterrupted(step);
    return null;
  }

  private async settleInterrupted(step: Step) {
    const { leases } = this.context;
    const interruption = this.interruption;
    if (!interruption) return;
    switch (interruption.reason) {
      case 'status-changed': {
        // Why is in the log already: whoever cancelled it wrote that before the status changed.
        const { status } = interruption.now;
        this.log.line(`Deployment ${status.toLowerCase()}: the ${step} step was stopped.`);
        await this.saveLogs();
        this.logger.info({ status }, 'deployment changed elsewhere; run stopped');
        return;
      }
      case 'shutdown':
        this.log.line(`The pipeline worker is shutting down: the ${step} step will run again.`);
        await this.saveLogs();
        await leases.handBack(this.lease);
        this.logger.info('deployment handed back on shutdown');
        return;
      case 'deleted':
        this.logger.info('deployment deleted; run stopped');
        return;
      case 'lease-lost':
        this.logger.warn('another worker took the deployment over; run stopped');
        return;
    }
  }
}

/** Why a lease is no longer held, as the run's interruption. */
function interruptionOf(state: Exclude<LeaseState, { held: true }>): Interruption {
  return state.reason === 'status-changed'
    ? { reason: 'status-changed', now: state.now }
    : { reason: state.reason };
}
