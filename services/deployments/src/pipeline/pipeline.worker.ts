import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { Claiming } from './claiming';
import { DeploymentRun, type RunContext } from './deployment-run';
import { Leases, type Claim } from './leases';
import type { PipelineWorkerOptions } from './pipeline.options';

export type { PipelineWorkerOptions } from './pipeline.options';

/**
 * Runs deployments in this process: claims BUILDING/DEPLOYING ones with a lease, runs the
 * build then the deploy command, and records the status changes. Any number of workers
 * (replicas) share the work through the leases; one that dies loses its claim when its lease
 * expires, and the next worker runs the interrupted step again from the start.
 */
export class PipelineWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly context: RunContext;
  private readonly claiming: Claiming;
  private readonly active = new Map<string, { run: DeploymentRun; done: Promise<void> }>();
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private idling?: AbortController;

  constructor(options: PipelineWorkerOptions) {
    const { models, ...rest } = options;
    this.context = {
      options: rest,
      workerId: this.workerId,
      leases: new Leases(models, options.logLimitBytes, options.logAppended),
      deployments: new DeploymentsRepository(models, options.outbox),
      logger: options.logger.child({ component: 'pipeline', workerId: this.workerId }),
    };
    this.claiming = new Claiming(
      models,
      options.logLimitBytes,
      options.accountLimits,
      options.logAppended,
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.claimLoop();
  }

  /** A deployment was just created: look for work now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.idling?.abort();
  }

  /**
   * Claims nothing more, stops the running steps and gives their deployments back, so another
   * worker re-runs the step at once instead of waiting for the lease to expire.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    for (const { run } of this.active.values()) run.interrupt({ reason: 'shutdown' });
    await Promise.all([...this.active.values()].map(({ done }) => done));
  }

  private async claimLoop() {
    const { concurrency, pollIntervalMs } = this.context.options;
    while (this.running) {
      let claimed = false;
      if (this.active.size < concurrency) {
        try {
          claimed = await this.claimOne();
        } catch (err) {
          this.context.logger.warn(
            { err: (err as Error).message },
            'could not look for deployments to run',
          );
        }
      }
      if (!claimed) await this.idle(pollIntervalMs);
    }
  }

  /** Claims and starts one deployment; false when there is none to run. */
  private async claimOne(): Promise<boolean> {
    const { leases, options, workerId } = this.context;
    const claim = await this.claiming.claimNext(workerId, options.leaseMs);
    if (!claim) return false;
    if (!this.running) {
      await leases.handBack(claim.lease);
      return false;
    }
    this.launch(claim);
    return true;
  }

  private launch({ deployment, lease }: Claim) {
    const run = new DeploymentRun(deployment, lease, this.context);
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

  /** Waits `ms`, or less when woken (now or meanwhile). */
  private async idle(ms: number): Promise<void> {
    if (!this.woken) {
      this.idling = new AbortController();
      await sleep(ms, undefined, { signal: this.idling.signal }).catch(() => undefined);
      this.idling = undefined;
    }
    this.woken = false;
  }
}
