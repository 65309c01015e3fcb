const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** Parses `250ms`, `5s`, `30m`, `2h` or `5d` into milliseconds; null when it is none of those. */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/**
 * The waits before each retry, e.g. `5s,5m,30m,2h,5h,10h,10h` (the Standard Webhooks schedule):
 * a delivery gets one first attempt plus one retry per entry.
 */
export function parseRetrySchedule(text: string): number[] {
  const items = text.split(',').map((item) => item.trim());
  const delays = items.map(parseDuration);
  const bad = items.filter((_, i) => delays[i] === null || delays[i] === 0);
  if (items.length === 0 || bad.length > 0) {
    throw new Error(`not a list of durations like 5s,5m,2h: ${bad.join(', ') || text}`);
  }
  return delays as number[];
}

export const JITTER_RATIO = 0.2;

/**
 * Spreads `delayMs` by up to ±20 %, so receivers that failed together are not retried in one
 * burst. `random` is injectable for tests.
 */
export function withJitter(delayMs: number, random: () => number = Math.random): number {
  const factor = 1 - JITTER_RATIO + 2 * JITTER_RATIO * random();
  return Math.round(delayMs * factor);
}
