export const TRIMMED_MARKER =
  '[... earlier output trimmed: the log keeps the most recent output ...]\n';
const MARKER_BYTES = Buffer.byteLength(TRIMMED_MARKER);
/** Cut at a line start when one is this close (and within a quarter of what is kept). */
const LINE_SEARCH_BYTES = 1024;

/**
 * A deployment's log in memory, never over `limitBytes` (UTF-8): when output overflows it,
 * the oldest is dropped and one marker line at the top says so. `dirty` tells the pipeline
 * there is something new to write.
 */
export class LogBuffer {
  private text: string;
  private bytes: number;
  private trimmed: boolean;
  private version = 0;
  private writtenVersion = 0;

  constructor(
    private readonly limitBytes: number,
    initial = '',
  ) {
    if (limitBytes <= MARKER_BYTES) throw new Error(`log limit must exceed ${MARKER_BYTES} bytes`);
    this.trimmed = initial.startsWith(TRIMMED_MARKER);
    this.text = this.trimmed ? initial.slice(TRIMMED_MARKER.length) : initial;
    this.bytes = Buffer.byteLength(this.text);
    this.trimIfOver();
  }

  append(output: string): void {
    if (output.length === 0) return;
    this.text += output;
    this.bytes += Buffer.byteLength(output);
    this.version++;
    this.trimIfOver();
  }

  /** A line of the pipeline's own, always starting on a fresh line. */
  line(message: string): void {
    const fresh = this.text.length === 0 || this.text.endsWith('\n');
    this.append(`${fresh ? '' : '\n'}${message}\n`);
  }

  /** Output arrived since the last snapshot that was written. */
  get dirty(): boolean {
    return this.version !== this.writtenVersion;
  }

  /** The log to write now; call `written(snapshot)` once the write succeeded. */
  snapshot(): { text: string; version: number } {
    return { text: this.toString(), version: this.version };
  }

  written(snapshot: { version: number }): void {
    this.writtenVersion = Math.max(this.writtenVersion, snapshot.version);
  }

  toString(): string {
    return this.trimmed ? TRIMMED_MARKER + this.text : this.text;
  }

  private trimIfOver() {
    if (this.bytes + (this.trimmed ? MARKER_BYTES : 0) <= this.limitBytes) return;
    const keep = this.limitBytes - MARKER_BYTES;
    const buffer = Buffer.from(this.text, 'utf8');
    let start = buffer.length - keep;
    // Never start inside a multi-byte character.
    while (start < buffer.length && (buffer[start]! & 0xc0) === 0x80) start++;
    const newline = buffer.indexOf(0x0a, start);
    if (newline !== -1 && newline - start < Math.min(LINE_SEARCH_BYTES, keep / 4)) {
      start = newline + 1;
    }
    this.text = buffer.subarray(start).toString('utf8');
    this.bytes = buffer.length - start;
    this.trimmed = true;
  }
}
