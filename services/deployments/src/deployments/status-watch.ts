/** How a wait for a deployment's next status change ended. */
export type WaitOutcome = 'changed' | 'timeout' | 'aborted';

export interface PendingChange {
  /** Settles at the deployment's next status change, the time limit, or the signal. */
  outcome: Promise<WaitOutcome>;
  /** Stops waiting (settles as 'aborted'); safe to call after it settled. */
  cancel(): void;
}

/**
 * The requests waiting for a deployment to change status (`GET …/:deploymentId?wait=N`), woken
 * by the status events every replica receives (compose.ts feeds `changed` from watchEvents):
 * no poll loop and no database connection held per waiter, one timer each.
 */
export class StatusWatch {
  private readonly waiting = new Map<string, Set<(outcome: WaitOutcome) => void>>();

  /** Waiting requests, for tests and metrics. */
  get size(): number {
    let count = 0;
    for (const set of this.waiting.values()) count += set.size;
    return count;
  }

  /** Starts waiting for the next change of `deploymentId`, at most `timeoutMs`. */
  nextChange(deploymentId: string, timeoutMs: number, signal?: AbortSignal): PendingChange {
    let settle!: (outcome: WaitOutcome) => void;
    const outcome = new Promise<WaitOutcome>((resolve) => {
      const timer = setTimeout(() => settle('timeout'), timeoutMs);
      const onAbort = () => settle('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      settle = (result) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const set = this.waiting.get(deploymentId);
        set?.delete(settle);
        if (set?.size === 0) this.waiting.delete(deploymentId);
        resolve(result);
      };
    });
    if (signal?.aborted) settle('aborted');
    else {
      const set = this.waiting.get(deploymentId) ?? new Set();
      set.add(settle);
      this.waiting.set(deploymentId, set);
    }
    return { outcome, cancel: () => settle('aborted') };
  }

  /** A status change of `deploymentId` was published: wake its waiters. */
  changed(deploymentId: string): void {
    for (const settle of [...(this.waiting.get(deploymentId) ?? [])]) settle('changed');
  }
}
