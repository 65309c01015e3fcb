import { microsOf, parseTimestamp } from './pod-log';

/** Longer than any RFC 3339 time with nanoseconds: a line's start this long without a space has none. */
const MAX_STAMP_CHARS = 40;

/**
 * A container's log as the API server streams it with `timestamps=true` (each line after the
 * time it was read, and a space), turned back into the output as printed, chunk by chunk: the
 * lines stamped at or before `afterMicros` (what an earlier read had) are left out, and
 * `lastMicros` is the stamp of the last line begun, where a later read goes on from. A chunk may
 * end anywhere, within a stamp too; a line without a stamp (the end of a long line begun before
 * the read) goes with the line before it.
 */
export class StampedOutput {
  lastMicros: number;
  /** The start of a line whose stamp has not ended yet. */
  private pending = '';
  private atLineStart = true;
  private skipping: boolean;

  constructor(private readonly afterMicros: number) {
    this.lastMicros = afterMicros;
    this.skipping = afterMicros > 0;
  }

  /** The output in `chunk` (with what an earlier chunk left unfinished). */
  write(chunk: string): string {
    const text = this.pending + chunk;
    this.pending = '';
    const out: string[] = [];
    let at = 0;
    while (at < text.length) {
      if (this.atLineStart) {
        const space = text.indexOf(' ', at);
        const newline = text.indexOf('\n', at);
        const stampEnd = newline !== -1 && (space === -1 || newline < space) ? newline : space;
        if (stampEnd === -1 && text.length - at <= MAX_STAMP_CHARS) {
          this.pending = text.slice(at);
          break;
        }
        this.atLineStart = false;
        const stamp = stampEnd === -1 ? null : parseTimestamp(text.slice(at, stampEnd));
        if (stamp !== null) {
          const micros = microsOf(stamp);
          this.skipping = micros <= this.afterMicros;
          if (micros > this.lastMicros) this.lastMicros = micros;
          // The space after the stamp is not the line's (an empty line has none).
          at = stampEnd === space ? stampEnd + 1 : stampEnd;
        }
        continue;
      }
      const newline = text.indexOf('\n', at);
      const end = newline === -1 ? text.length : newline + 1;
      if (!this.skipping) out.push(text.slice(at, end));
      at = end;
      if (newline !== -1) this.atLineStart = true;
    }
    return out.join('');
  }

  /** What is left when the log ends: a last line's start too short to hold a stamp. */
  end(): string {
    const rest = this.pending;
    this.pending = '';
    return this.skipping ? '' : rest;
  }
}
