/**
 * A run's output not written yet. The log is stored as whole lines (LogStore), so what is written
 * at each heartbeat is the output up to its last newline; a line still being printed waits for
 * the next write, and the last write (a status change, a stop) takes all of it.
 */
export class LogBuffer {
  private pending = '';

  append(output: string): void {
    this.pending += output;
  }

  /** A line of the pipeline's own, always starting on a fresh line. */
  line(message: string): void {
    const fresh = this.pending === '' || this.pending.endsWith('\n');
    this.pending += `${fresh ? '' : '\n'}${message}\n`;
  }

  /** Whether there are whole lines to write. */
  get dirty(): boolean {
    return this.pending.includes('\n');
  }

  /**
   * Takes what is to be written now: the whole lines, or with `all` everything (a line still
   * being printed is ended). It is gone from the buffer either way.
   */
  take(all = false): string {
    const end = all ? this.pending.length : this.pending.lastIndexOf('\n') + 1;
    const text = this.pending.slice(0, end);
    this.pending = this.pending.slice(end);
    return text && !text.endsWith('\n') ? `${text}\n` : text;
  }
}
