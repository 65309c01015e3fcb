/** LOG_LINE_MAX_BYTES's default: a line of a log, its cut marker included, is at most this long. */
export const DEFAULT_LOG_LINE_MAX_BYTES = 16 * 1024;

/** What ends a line that was cut: it says how long the line was (in UTF-8 bytes). */
export const cutMarker = (lineBytes: number) =>
  ` [... line cut: it was ${lineBytes} bytes long ...]`;

/** Room for the longest marker, so that a cut line with its marker still fits the limit. */
const MARKER_ROOM = Buffer.byteLength(cutMarker(Number.MAX_SAFE_INTEGER));

/**
 * Cuts the lines of a stream of output (any chunks, any content) at a maximum length: of a line
 * longer than `maxLineBytes`, the start is passed on and the rest counted, not kept, and the line
 * ends with `cutMarker(its length)`, within the limit. A line up to the limit passes unchanged
 * (its last few bytes wait until it is known to end in time), so whatever a process prints, no
 * line held or stored grows past the limit, and a line already cut passes another LineLimit as
 * it is.
 */
export class LineLimit {
  /** Bytes of a line passed on before it is cut: the marker fits after them. */
  private readonly keep: number;
  private readonly scratch: Uint8Array;
  private readonly encoder = new TextEncoder();
  /** Bytes of the current line so far, the ones not passed on included. */
  private lineBytes = 0;
  private cut = false;
  /** The current line's bytes past `keep`, while it may still end within the limit. */
  private held = '';

  constructor(readonly maxLineBytes: number) {
    if (maxLineBytes < MARKER_ROOM * 2) throw new Error('the line limit is too small');
    this.keep = maxLineBytes - MARKER_ROOM;
    this.scratch = new Uint8Array(this.keep);
  }

  /** Whether a line has begun and not ended. */
  get open(): boolean {
    return this.lineBytes > 0;
  }

  /** `chunk` as it may be kept: every line within the limit (a line still open included). */
  write(chunk: string): string {
    // Most output: nothing in the chunk can take a line past the limit (3 bytes a UTF-16 unit
    // at most), so it passes whole.
    if (!this.cut && this.lineBytes + chunk.length * 3 <= this.keep) {
      const newline = chunk.lastIndexOf('\n');
      this.lineBytes =
        newline === -1
          ? this.lineBytes + Buffer.byteLength(chunk)
          : Buffer.byteLength(chunk.slice(newline + 1));
      return chunk;
    }
    let out = '';
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf('\n', start);
      const end = newline === -1 ? chunk.length : newline;
      out += this.piece(chunk.slice(start, end));
      if (newline === -1) break;
      out += `${this.endLine()}\n`;
      start = newline + 1;
    }
    return out;
  }

  /**
   * What ends the current line: the marker if it was cut, else what of it was held back ('' for
   * most lines). The next line is a new one.
   */
  end(): string {
    return this.endLine();
  }

  /** A piece of the current line with no newline: what of it is kept. */
  private piece(text: string): string {
    if (text === '') return '';
    const before = this.lineBytes;
    this.lineBytes += Buffer.byteLength(text);
    if (this.cut) return '';
    if (this.lineBytes <= this.keep) return text;
    // encodeInto writes whole characters only: the part passed on never ends in half of one.
    const room = Math.max(this.keep - before, 0);
    const { read } = this.encoder.encodeInto(text, this.scratch.subarray(0, room));
    if (this.lineBytes <= this.maxLineBytes) this.held += text.slice(read);
    else {
      this.cut = true;
      this.held = '';
    }
    return text.slice(0, read);
  }

  private endLine(): string {
    const end = this.cut ? cutMarker(this.lineBytes) : this.held;
    this.lineBytes = 0;
    this.cut = false;
    this.held = '';
    return end;
  }
}
