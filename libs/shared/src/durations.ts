import ms from 'ms';
import { z } from 'zod';

/**
 * The one grammar for durations in configuration: a number and a unit, as the `ms` package reads
 * them (`500ms`, `45s`, `90m`, `12h`, `30d`, also `1.5h`). A bare number is refused rather than
 * guessed (seconds to one reader, milliseconds to another). Returns milliseconds, or null.
 */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+(\.\d+)?\s*[a-z]+$/i.test(trimmed)) return null;
  const value = ms(trimmed as ms.StringValue);
  return Number.isFinite(value) && value > 0 ? Math.round(value) : null;
}

const DURATION_HINT = 'must be a duration such as 500ms, 45s, 90m, 12h or 30d';

/** A duration environment variable → milliseconds, within `[min, max]` when given. */
export function durationEnv(fallback: string, bounds: { min?: string; max?: string } = {}) {
  const minMs = bounds.min ? parseDuration(bounds.min) : null;
  const maxMs = bounds.max ? parseDuration(bounds.max) : null;
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const value = parseDuration(text);
      if (value === null) ctx.addIssue({ code: 'custom', message: DURATION_HINT });
      else if (minMs !== null && value < minMs)
        ctx.addIssue({ code: 'custom', message: `must be at least ${bounds.min}` });
      else if (maxMs !== null && value > maxMs)
        ctx.addIssue({ code: 'custom', message: `must be at most ${bounds.max}` });
      else return value;
      return z.NEVER;
    });
}

/** A comma-separated list of durations (`5s,5m,30m`) → milliseconds, in order, at least one. */
export function durationListEnv(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const values = text.split(',').map((item) => parseDuration(item));
      if (values.length === 0 || values.some((v) => v === null)) {
        ctx.addIssue({ code: 'custom', message: `each item ${DURATION_HINT}, comma-separated` });
        return z.NEVER;
      }
      return values as number[];
    });
}
