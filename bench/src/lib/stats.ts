import { ms } from './log';

export interface Distribution {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Exact percentiles of a sample (milliseconds in, milliseconds out, 2 decimals). */
export function distribution(values: ArrayLike<number>): Distribution {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    min: ms(sorted[0] ?? NaN),
    mean: ms(sum / sorted.length),
    p50: ms(percentile(sorted, 50)),
    p90: ms(percentile(sorted, 90)),
    p95: ms(percentile(sorted, 95)),
    p99: ms(percentile(sorted, 99)),
    max: ms(sorted[sorted.length - 1] ?? NaN),
  };
}

/** A growable list of samples with a hard cap, so no run can grow memory without bound. */
export class Samples {
  private values: Float64Array;
  private size = 0;
  dropped = 0;

  constructor(private readonly cap = 2_000_000) {
    this.values = new Float64Array(Math.min(cap, 65_536));
  }

  push(value: number): void {
    if (this.size === this.values.length) {
      if (this.size >= this.cap) {
        this.dropped++;
        return;
      }
      const bigger = new Float64Array(Math.min(this.cap, this.values.length * 2));
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.size++] = value;
  }

  get length(): number {
    return this.size;
  }

  toArray(): Float64Array {
    return this.values.subarray(0, this.size);
  }
}

/** Times one async call in milliseconds (high resolution). */
export async function timed<T>(action: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = process.hrtime.bigint();
  const value = await action();
  return { value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}
