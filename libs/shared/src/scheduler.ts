import type { Logger } from 'pino';

export interface ScheduledTask {
  /** Names the task in logs. */
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
  /**
   * Also run once at once, not only after the first interval: for tasks with a long interval in
   * a process that may be replaced more often than that (a replica redeployed hourly would
   * otherwise never prune).
   */
  runAtStart?: boolean;
}

/**
 * Periodic housekeeping (pruning old records, sweeping for stragglers): each task runs every
 * `everyMs` (and at once with `runAtStart`), never two runs of one task at once (a slow run
 * makes the next wait for the following tick), a failure is logged and tried again next time. Timers do not keep the process
 * alive. `stop()` clears the timers and resolves once runs in progress have finished; register it
 * with the Lifecycle.
 */
export class Scheduler {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly log: Logger;

  constructor(logger: Logger) {
    this.log = logger.child({ component: 'scheduler' });
  }

  every(task: ScheduledTask): void {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      const run = task
        .run()
        .then(
          () => undefined,
          (err: unknown) => this.log.warn({ err, task: task.name }, 'scheduled task failed'),
        )
        .finally(() => {
          busy = false;
          this.running.delete(run);
        });
      this.running.add(run);
    };
    this.timers.push(setInterval(tick, task.everyMs).unref());
    if (task.runAtStart) tick();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await Promise.all([...this.running]);
  }
}
