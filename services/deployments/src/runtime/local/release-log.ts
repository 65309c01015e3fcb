import { createWriteStream, fstatSync, openSync, renameSync, type WriteStream } from 'node:fs';
import { promises as fs } from 'node:fs';
import { LineLimit } from '../../pipeline/line-limit';
import { SecretMask } from '../../pipeline/secret-mask';

export interface ReleaseLogLimits {
  /** LOG_LINE_MAX_BYTES: a longer line is cut (LineLimit). */
  maxLineBytes: number;
  /** RUNTIME_LOG_MAX_BYTES: the most the log takes on disk; the oldest output goes first. */
  maxBytes: number;
}

/** Output given to the file but not yet written, at most: past it, output is dropped. */
const MAX_QUEUED_BYTES = 1024 * 1024;

/** The line that stands where output was dropped because the disk did not keep up. */
const droppedMarker = (bytes: number) =>
  `[... ${bytes} bytes of the app’s output dropped here: it came faster than the disk took it ...]\n`;

/** The first line of a read that starts before the oldest output kept. */
const goneMarker = (bytes: number, kept: number) =>
  `[... ${bytes} bytes of the app’s output are no longer kept: the log keeps the most recent ${kept} ...]\n`;

/**
 * How much of `bytes` ends on a whole UTF-8 character: a read that stopped inside one leaves it
 * for the next read instead of returning half of it (twice, as two replacement characters).
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  let lead = bytes.length - 1;
  // Continuation bytes are 10xxxxxx; at most three follow their lead byte.
  while (lead >= 0 && lead >= bytes.length - 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0 || bytes[lead]! < 0xc0) return bytes.length;
  const size = bytes[lead]! >= 0xf0 ? 4 : bytes[lead]! >= 0xe0 ? 3 : 2;
  return lead + size > bytes.length ? lead : bytes.length;
}

/**
 * A release's log (`logs/<releaseId>.log`): what its app prints and the runtime's own `==> `
 * lines, read by byte offset as it grows. Bounded whatever the app prints: lines are cut at
 * `maxLineBytes`; the file is two halves of `maxBytes` (the current one, and the one before as
 * `<file>.1`), so the oldest output goes first and a read from an offset no longer kept starts
 * with a line saying how much is gone; offsets keep counting across the halves. Output the disk
 * has not taken yet is held up to MAX_QUEUED_BYTES, then dropped with a line saying so. A file
 * that cannot be written (a full disk) loses the output, never the supervisor: `onError` is told.
 * The values of `secrets` never reach the file: they are written `****`, as in a build's log
 * (SecretMask), before any line is cut.
 */
export class ReleaseLog {
  private readonly lines: LineLimit;
  private readonly mask: SecretMask;
  private readonly halfBytes: number;
  private stream: WriteStream;
  /** Offset of the current file's first byte, and of `<file>.1`'s when there is one. */
  private base = 0;
  private previousBase: number | null = null;
  /** Bytes given to the current file. */
  private written = 0;
  private dropped = 0;
  private rotations = 0;
  private failed = false;
  private ended = false;

  constructor(
    readonly file: string,
    limits: ReleaseLogLimits,
    secrets: string[],
    private readonly onError: (err: Error) => void,
  ) {
    this.lines = new LineLimit(limits.maxLineBytes);
    this.mask = new SecretMask(secrets);
    this.halfBytes = Math.floor(limits.maxBytes / 2);
    this.stream = this.open('a');
  }

  /** What the app printed (any chunk: lines are cut and ended here). */
  output(chunk: string): void {
    this.append(this.lines.write(this.mask.write(chunk)));
  }

  /** A line of the runtime's own (`==> text`), on a line of its own. */
  line(text: string): void {
    const held = this.lines.write(this.mask.flush());
    const close = this.lines.open ? `${this.lines.end()}\n` : '';
    this.append(`${held}${close}${this.mask.write(`==> ${text}\n`)}${this.mask.flush()}`);
  }

  /**
   * Up to `maxBytes` of the log from `offset` (never half a character): `nextOffset` is where
   * the next read goes on. From an offset older than what is kept, the text starts with a line
   * saying how much is gone, and goes on from the oldest output kept.
   */
  async read(offset: number, maxBytes: number): Promise<{ text: string; nextOffset: number }> {
    for (;;) {
      const rotations = this.rotations;
      const oldest = this.previousBase ?? this.base;
      const from = Math.max(offset, oldest);
      const [file, start] =
        from >= this.base ? [this.file, from - this.base] : [`${this.file}.1`, from - oldest];
      const handle = await fs.open(file, 'r');
      try {
        // Opened across a rotation: the name may be another half's now; read again.
        if (rotations !== this.rotations) continue;
        const buffer = Buffer.alloc(maxBytes);
        const { bytesRead } = await handle.read(buffer, 0, maxBytes, start);
        const end = completeUtf8Length(buffer.subarray(0, bytesRead));
        const gone = from > offset ? goneMarker(from - offset, this.halfBytes * 2) : '';
        return { text: gone + buffer.subarray(0, end).toString('utf8'), nextOffset: from + end };
      } finally {
        await handle.close();
      }
    }
  }

  /** Writes what is queued and closes the file; later output is dropped. */
  end(): Promise<void> {
    if (!this.ended) this.append(this.lines.write(this.mask.flush()));
    this.ended = true;
    if (this.stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }

  /** Closes the log and deletes its files. */
  async remove(): Promise<void> {
    await this.end();
    await Promise.all([this.file, `${this.file}.1`].map((file) => fs.rm(file, { force: true })));
  }

  private append(text: string): void {
    if (this.ended || this.failed || text === '') return;
    const bytes = Buffer.byteLength(text);
    if (this.stream.writableLength > MAX_QUEUED_BYTES) {
      this.dropped += bytes;
      return;
    }
    const marker = this.dropped > 0 ? droppedMarker(this.dropped) : '';
    this.dropped = 0;
    const total = bytes + Buffer.byteLength(marker);
    // Before the write, so that no half grows past its size (one write is far smaller).
    if (this.written > 0 && this.written + total > this.halfBytes) this.rotate();
    this.stream.write(marker + text);
    this.written += total;
  }

  /** The current file becomes `<file>.1` (the one before goes) and a new one starts. */
  private rotate(): void {
    // The old stream writes what it holds through its descriptor, into the renamed file.
    this.stream.end();
    renameSync(this.file, `${this.file}.1`);
    this.previousBase = this.base;
    this.base += this.written;
    this.written = 0;
    this.rotations++;
    this.stream = this.open('w');
  }

  /**
   * A stream on a descriptor opened now, so that a rename never races its opening. The first
   * file appends to what a release of the same id left (offsets count from its start).
   */
  private open(flags: 'a' | 'w'): WriteStream {
    let fd: number;
    try {
      fd = openSync(this.file, flags);
      this.written = fstatSync(fd).size;
    } catch (err) {
      this.fail(err as Error);
      fd = openSync('/dev/null', 'w');
    }
    const stream = createWriteStream('', { fd });
    // The stream closes its descriptor itself; a write that fails ends this log, nothing else.
    stream.on('error', (err) => {
      if (stream === this.stream) this.fail(err);
    });
    return stream;
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.onError(err);
  }
}
