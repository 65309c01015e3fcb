import type { LogBuffer } from './log-buffer';

export interface LogWriterOptions {
  /** Writes whole lines to the deployment's log (Leases.writeLogs); false: refused for good. */
  write(text: string): Promise<boolean>;
  /**
   * LOG_FLUSH_DELAY: the longest a whole line waits for others to share its write, beyond the
   * write in flight when it was printed.
   */
  delayMs: number;
  /** Written at once, without waiting for `delayMs`, when this much is waiting. */
  maxBatchBytes: number;
  /** After a write that failed (the store away), how long before the next try. */
  retryMs: number;
  /** A write was refused: the deployment is gone, or a later claim has written. */
  refused(): void;
  /** A write failed: its lines are lost (as a store that falls behind loses the oldest). */
  failed(err: Error): void;
}

/**
 * A run's output on its way to the log, written as it arrives: a write starts as soon as there
 * are whole lines and none is in flight, after at most `delayMs` of batching (or at once past
 * `maxBatchBytes`), and never two at once, so the log's order is the printing order and the
 * store sees at most one write per run at a time. What is printed during a write goes in the
 * next. `flush` is the run's own write (a status change, a stop): after the one in flight, and
 * with `all`, everything, the line still being printed ended. The buffer keeps its bounds
 * (LogBuffer): a store slower than the output costs the oldest lines, as before.
 */
export class LogWriter {
  private writing?: Promise<unknown>;
  private timer?: NodeJS.Timeout;
  /** When the oldest line waiting was printed (0: none waits). */
  private waitingSince = 0;
  private retryAt = 0;
  private closed = false;
  /** Flushes waiting for the write in flight: theirs is the next write, no background one. */
  private flushing = 0;

  constructor(
    private readonly buffer: LogBuffer,
    private readonly options: LogWriterOptions,
  ) {}

  /** Output of the step, as printed. */
  append(output: string): void {
    this.buffer.append(output);
    this.kick();
  }

  /** A line of the pipeline's own. */
  line(message: string): void {
    this.buffer.line(message);
    this.kick();
  }

  /**
   * Writes what waits now (with `all`, everything), after the write in flight, even if nothing
   * waits (the write checks the claim); false when refused.
   */
  async flush(all = false): Promise<boolean> {
    this.cancelTimer();
    this.flushing++;
    try {
      while (this.writing) await this.writing.catch(() => undefined);
    } finally {
      this.flushing--;
    }
    return this.write(all);
  }

  /** No more background writes; resolves once the one in flight is done. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelTimer();
    while (this.writing) await this.writing.catch(() => undefined);
  }

  /** Output arrived (or a write ended): a write soon if whole lines wait and none is in flight. */
  private kick() {
    if (this.closed || !this.buffer.dirty) return;
    const now = Date.now();
    if (this.waitingSince === 0) this.waitingSince = now;
    if (this.writing || this.flushing > 0) return;
    const full = this.buffer.pendingBytes >= this.options.maxBatchBytes;
    const due = Math.max(full ? now : this.waitingSince + this.options.delayMs, this.retryAt);
    if (this.timer && !full) return;
    this.cancelTimer();
    if (due <= now) {
      this.background();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.background();
    }, due - now);
  }

  private background() {
    if (this.closed || this.writing) return;
    void this.write(false).then(
      (ok) => {
        if (!ok) this.options.refused();
      },
      (err: unknown) => {
        this.retryAt = Date.now() + this.options.retryMs;
        this.options.failed(err as Error);
      },
    );
  }

  private write(all: boolean): Promise<boolean> {
    const text = this.buffer.take(all);
    this.waitingSince = 0;
    const writing = this.options.write(text);
    this.writing = writing;
    const done = () => {
      if (this.writing === writing) this.writing = undefined;
      this.kick();
    };
    writing.then(done, done);
    return writing;
  }

  private cancelTimer() {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
