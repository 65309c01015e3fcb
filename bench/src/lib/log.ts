import { setTimeout as sleep } from 'node:timers/promises';

const startedAt = Date.now();

/** Progress on stderr, with the seconds since the benchmark started. */
export function say(message: string): void {
  const t = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${t}s] ${message}\n`);
}

/** Polls `check` until it returns something truthy; throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | null | undefined | false>,
  options: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what}`);
    await sleep(options.intervalMs ?? 100);
  }
}

export { sleep };

/** Milliseconds with a fixed number of decimals, for tables and JSON. */
export const ms = (value: number, decimals = 2) => Number(value.toFixed(decimals));
