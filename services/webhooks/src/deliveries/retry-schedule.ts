export const JITTER_RATIO = 0.2;

/**
 * Spreads a retry's wait (WEBHOOK_RETRY_SCHEDULE) by up to ±20 %, so receivers that failed
 * together are not retried in one burst. `random` is injectable for tests.
 */
export function withJitter(delayMs: number, random: () => number = Math.random): number {
  const factor = 1 - JITTER_RATIO + 2 * JITTER_RATIO * random();
  return Math.round(delayMs * factor);
}
