import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Model } from 'mongoose';
import type { Logger } from '@platform/shared';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { DeploymentsRepository, type Deployment } from '../deployments/deployments.repository';
import type { DeploymentStatus } from '../deployments/status';
import { LogBuffer } from './log-buffer';
import { PipelineRepository, type LeaseCheck } from './pipeline.repository';
import { startStep, type RunningStep, type StepResult } from './step-runner';

export interface PipelineWorkerOptions {
  deployments: Model<DeploymentDoc>;
  logger: Logger;
  buildCommand: string;
  deployCommand: string;
  /** The environment the commands start from (PATH, HOME); the deployment's values are added. */
  commandEnv: Record<string, string>;
  stepTimeoutMs: number;
  logLimitBytes: number;
  concurrency: number;
  /** A claim not renewed for this long is taken over by another worker. */
  leaseMs: number;
  /** How often the lease is renewed, new output written and a cancel noticed. */
  heartbeatMs?: number;
  /** How often to look for work when nobody called wake(). */
  pollIntervalMs?: number;
  /** After SIGTERM, how long a step's processes get before SIGKILL. */
  killGraceMs?: number;
  /** Claims after which a deployment whose workers keep disappearing is FAILED. */
  maxAttempts?: number;
  /** Called after a write that queued a status event (wakes the outbox relay). */
  onEventQueued: () => void;
}

type Step = 'build' | 'deploy';

const STEP_STATUS: Record<Step, DeploymentStatus> = { build: 'BUILDING', deploy: 'DEPLOYING' };

/** Why a run stopped before its step finished. */
type Interruption = Exclude<LeaseCheck, { held: true }> | { held: false; reason: 'shutdown' };

interface RunContext {
  options: Required<Omit<PipelineWorkerOptions, 'deployments'>>;
  workerId: string;
  pipeline: PipelineRepository;
  deployments: DeploymentsRepository;
  logger: Logger;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Runs deployments in this process: claims BUILDING/DEPLOYING ones with a lease, runs the
 * build then the deploy command, and moves the status along. Any number of workers (replicas)
 * share the work through the lease; one that dies loses its claim when the lease expires, and
 * the next worker runs the interrupted step again from the start.
 */
export class PipelineWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly context: RunContext;
  private readonly active = new Map<string, { run: DeploymentRun; done: Promise<void> }>();
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeLoop?: () => void;

  constructor(options: PipelineWorkerOptions) {
    const { deployments, ...rest } = options;
    const logger = options.logger.child({ component: 'pipeline', workerId: this.workerId });
    this.context = {
      options: {
        heartbeatMs: 300,
        pollIntervalMs: 1_000,
        killGraceMs: 5_000,
        maxAttempts: 3,
        ...rest,
      },
      workerId: this.workerId,
      pipeline: new PipelineRepository(deployments),
      deployments: new DeploymentsRepository(deployments),
      logger,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.claimLoop();
  }

  /** A deployment was just created: look for work now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeLoop?.();
  }

  /**
   * Claims nothing more, stops the running steps and gives their deployments back, so another
   * worker re-runs the step at once instead of waiting for the lease to expire.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    for (const { run } of this.active.values()) run.interrupt({ held: false, reason: 'shutdown' });
    await Promise.all([...this.active.values()].map(({ done }) => done));
  }

  private async claimLoop() {
    const { concurrency, leaseMs, pollIntervalMs } = this.context.options;
    while (this.running) {
      if (this.active.size >= concurrency) {
        await this.idle(pollIntervalMs);
        continue;
      }
      let claimed: Deployment | null = null;
      try {
        claimed = await this.context.pipeline.claimNext(this.workerId, leaseMs);
      } catch (err) {
        this.context.logger.warn(
          { err: (err as Error).message },
          'could not look for deployments to run',
        );
      }
      if (!claimed) {
        await this.idle(pollIntervalMs);
        continue;
      }
      if (!this.running) {
        await this.context.pipeline
          .release(claimed.id, this.workerId, claimed.logs, true)
          .catch(() => false);
        break;
      }
      this.launch(claimed);
    }
  }

  private launch(deployment: Deployment) {
    const run = new DeploymentRun(deployment, this.context);
    const done = run
      .run()
      .catch((err: unknown) => {
        // Its lease expires and a worker takes it up again.
        this.context.logger.error({ err, deploymentId: deployment.id }, 'pipeline run failed');
      })
      .finally(() => {
        this.active.delete(deployment.id);
        this.wake();
      });
    this.active.set(deployment.id, { run, done });
  }

  private idle(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakeLoop = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeLoop = finish;
    });
  }
}

/** One claimed deployment, from its current step to a final status or to giving it up. */
class DeploymentRun {
  private readonly log: LogBuffer;
  private readonly logger: Logger;
  private leaseUntil: number;
  private step?: RunningStep;
  private interruption?: Interruption;
  private wakeHeartbeat?: () => void;

  constructor(
    private deployment: Deployment,
    private readonly context: RunContext,
  ) {
    this.log = new LogBuffer(context.options.logLimitBytes, deployment.logs);
    this.leaseUntil = deployment.leaseUntil.getTime();
    this.logger = context.logger.child({ deploymentId: deployment.id });
  }

  /** Stops the running step; the run then settles according to the reason. */
  interrupt(interruption: Interruption): void {
    this.interruption ??= interruption;
    void this.step?.stop();
    this.wakeHeartbeat?.();
  }

  async run(): Promise<void> {
    const { maxAttempts } = this.context.options;
    const { attempts, status } = this.deployment;
    if (attempts > 1) {
      this.log.line(
        `--- Attempt ${attempts}: the pipeline worker running this deployment stopped responding. ---`,
      );
    }
    if (attempts > maxAttempts) {
      await this.fail(`Gave up after ${maxAttempts} attempts.`);
      return;
    }
    this.logger.info({ status, attempts }, 'running deployment');
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
    const { options } = this.context;
    const started = Date.now();
    this.log.line(`==> ${step} step started`);
    this.step = startStep({
      command: step === 'build' ? options.buildCommand : options.deployCommand,
      env: this.commandEnv(),
      timeoutMs: options.stepTimeoutMs,
      killGraceMs: options.killGraceMs,
      onOutput: (text) => this.log.append(text),
    });
    if (this.interruption) void this.step.stop();
    let stepDone = false;
    const heartbeat = this.keepLease(step, () => stepDone);
    const result = await this.step.result;
    stepDone = true;
    this.wakeHeartbeat?.();
    await heartbeat;
    this.step = undefined;
    if (this.interruption) {
      await this.settleInterrupted(step);
      return false;
    }
    if (result.outcome === 'succeeded') {
      this.log.line(`==> ${step} step finished in ${seconds(Date.now() - started)}`);
      return true;
    }
    await this.fail(this.failureMessage(step, result));
    return false;
  }

  private failureMessage(step: Step, result: Exclude<StepResult, { outcome: 'succeeded' }>) {
    switch (result.outcome) {
      case 'failed':
        return result.exitCode !== null
          ? `The ${step} step failed with exit code ${result.exitCode}.`
          : `The ${step} step was killed by ${result.signal ?? 'a signal'}.`;
      case 'timed-out':
        return `The ${step} step ran longer than ${seconds(this.context.options.stepTimeoutMs)} and was stopped.`;
      case 'spawn-failed':
        return `The ${step} step could not start: ${result.message}`;
      case 'stopped':
        return `The ${step} step was stopped.`;
    }
  }

  private commandEnv(): Record<string, string> {
    const d = this.deployment;
    return {
      ...this.context.options.commandEnv,
      DEPLOYMENT_ID: d.id,
      SERVICE_ID: d.serviceId,
      PROJECT_ID: d.projectId,
      COMMIT_HASH: d.commitHash,
      COMMIT_MESSAGE: d.commitMessage,
    };
  }

  /** Until the step ends: renew the lease, write new output, notice a cancel or a lost lease. */
  private async keepLease(step: Step, isDone: () => boolean) {
    const { heartbeatMs } = this.context.options;
    while (!isDone()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, heartbeatMs);
        this.wakeHeartbeat = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeHeartbeat = undefined;
      if (isDone() || this.interruption) return;
      await this.beat(step);
    }
  }

  private async beat(step: Step) {
    const { pipeline, options, workerId } = this.context;
    const leaseUntil = Date.now() + options.leaseMs;
    const snapshot = this.log.dirty ? this.log.snapshot() : undefined;
    try {
      const check = await pipeline.heartbeat(
        this.deployment.id,
        workerId,
        STEP_STATUS[step],
        new Date(leaseUntil),
        snapshot?.text,
      );
      if (check.held) {
        this.leaseUntil = leaseUntil;
        if (snapshot) this.log.written(snapshot);
        return;
      }
      this.interrupt(check);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not renew the lease');
      // Stop before another worker may take over, so the step never runs twice at once.
      if (Date.now() >= this.leaseUntil - options.heartbeatMs) {
        this.interrupt({ held: false, reason: 'lease-lost' });
      }
    }
  }

  /** Moves to the next status with the logs; DEPLOYED also ends the lease. */
  private async advance(to: 'DEPLOYING' | 'DEPLOYED'): Promise<boolean> {
    const { deployments, options, workerId } = this.context;
    if (to === 'DEPLOYED') this.log.line('Deployed.');
    const snapshot = this.log.snapshot();
    const release = to === 'DEPLOYED' ? { leaseOwner: null, leaseUntil: NO_LEASE } : {};
    const updated = await deployments.transition(this.deployment, to, {
      leaseOwner: workerId,
      set: { logs: snapshot.text, ...release },
    });
    if (!updated) {
      await this.settleLostRace(to === 'DEPLOYING' ? 'build' : 'deploy');
      return false;
    }
    this.log.written(snapshot);
    this.deployment = updated;
    options.onEventQueued();
    this.logger.info({ status: to }, 'deployment moved on');
    return true;
  }

  private async fail(message: string) {
    const { deployments, options, workerId } = this.context;
    this.log.line(message);
    const updated = await deployments.transition(this.deployment, 'FAILED', {
      leaseOwner: workerId,
      set: { logs: this.log.toString(), leaseOwner: null, leaseUntil: NO_LEASE },
    });
    if (!updated) {
      await this.settleLostRace(this.deployment.status === 'BUILDING' ? 'build' : 'deploy');
      return;
    }
    options.onEventQueued();
    this.logger.info({ reason: message }, 'deployment failed');
  }

  /** A conditional write lost: find out to what (usually a cancel) and settle accordingly. */
  private async settleLostRace(step: Step) {
    const check = await this.context.pipeline.heartbeat(
      this.deployment.id,
      this.context.workerId,
      this.deployment.status,
      new Date(Date.now() + this.context.options.leaseMs),
    );
    this.interruption ??= check.held ? { held: false, reason: 'lease-lost' } : check;
    await this.settleInterrupted(step);
  }

  private async settleInterrupted(step: Step) {
    const { pipeline, workerId } = this.context;
    const interruption = this.interruption;
    if (!interruption) return;
    switch (interruption.reason) {
      case 'status-changed':
        this.log.line(
          `Deployment ${interruption.status.toLowerCase()}: the ${step} step was stopped.`,
        );
        await pipeline.release(this.deployment.id, workerId, this.log.toString());
        this.logger.info(
          { status: interruption.status },
          'deployment changed elsewhere; run stopped',
        );
        return;
      case 'shutdown':
        this.log.line(`The pipeline worker is shutting down: the ${step} step will run again.`);
        await pipeline.release(this.deployment.id, workerId, this.log.toString(), true);
        this.logger.info('deployment handed back on shutdown');
        return;
      case 'deleted':
        this.logger.info('deployment deleted; run stopped');
        return;
      case 'lease-lost':
        this.logger.warn('lost the lease on the deployment; run stopped');
        return;
    }
  }
}
