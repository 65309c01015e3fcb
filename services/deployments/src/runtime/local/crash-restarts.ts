export interface RestartPolicy {
  /** The first restart's delay; each further one within the window doubles it. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Restarts allowed within `windowMs`; the next crash is the last (state `crashed`). */
  limit: number;
  windowMs: number;
}

/** What follows a crash: a restart after `delayMs` (the `count`th in the window), or none. */
export type AfterCrash =
  { restart: true; delayMs: number; count: number } | { restart: false; why: string };

/**
 * What to do about a crash at `now`, given the times of the restarts before it (kept in
 * `restartTimes`, pruned to the window and pushed to when a restart is due): a doubling backoff,
 * until `limit` restarts within the window, then no more.
 */
export function afterCrash(policy: RestartPolicy, restartTimes: number[], now: number): AfterCrash {
  const recent = restartTimes.filter((t) => now - t < policy.windowMs);
  restartTimes.splice(0, restartTimes.length, ...recent);
  if (recent.length >= policy.limit) {
    return {
      restart: false,
      why: `crashed ${policy.limit + 1} times within ${policy.windowMs} ms: not restarted again`,
    };
  }
  const delayMs = Math.min(policy.initialDelayMs * 2 ** recent.length, policy.maxDelayMs);
  restartTimes.push(now);
  return { restart: true, delayMs, count: restartTimes.length };
}
