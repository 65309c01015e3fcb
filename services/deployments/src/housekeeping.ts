import type { Logger } from '@platform/shared';

/**
 * Runs clean-up tasks now and then (expired idempotency keys). Returns the function that
 * stops it. A failing task is logged and tried again next time.
 */
export function startHousekeeping(
  tasks: Record<string, () => Promise<unknown>>,
  intervalMs: number,
  logger: Logger,
): () => void {
  const log = logger.child({ component: 'housekeeping' });
  const runAll = async () => {
    for (const [name, task] of Object.entries(tasks)) {
      await task().catch((err: unknown) =>
        log.warn({ err: (err as Error).message, task: name }, 'task failed'),
      );
    }
  };
  const timer = setInterval(() => void runAll(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
