import { DEFAULT_LOG_LIMIT_BYTES } from '../deployments/log-store';
import { DEFAULT_LOG_LINE_MAX_BYTES, LineLimit } from './line-limit';

export interface LogBufferLimits {
  /** LOG_LINE_MAX_BYTES: a longer line is cut (LineLimit). */
  maxLineBytes: number;
  /**
   * Whole lines held until the next write, at most: beyond it the oldest go (the pipeline: half
   * of LOG_LIMIT_BYTES, as the log itself would not keep much more of them).
   */
  maxPendingBytes: number;
}

/** The line that stands where output was dropped, saying how much. */
export const droppedMarker = (lines: number, bytes: number) =>
  `[... ${lines} lines (${bytes} bytes) of output dropped here: more came at once than the log keeps ...]\n`;

/** Whole lines appended together, as held until the next write. */
interface Block {
  text: string;
  bytes: number;
  lines: number;
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/**
 * A run's output not written yet. The log is stored as whole lines (LogStore), so what is written
 * at each heartbeat is the output up to its last newline; a line still being printed waits for
 * the next write, and the last write (a status change, a stop) takes all of it.
 *
 * Bounded whatever is printed: lines are cut at `maxLineBytes` (so a line still being printed
 * holds at most that), and of the whole lines waiting, beyond `maxPendingBytes` the oldest are
 * dropped, the next write starting with a line that counts them (droppedMarker): a flood, or a
 * store that falls behind, costs the oldest output, as LOG_LIMIT_BYTES trims the log itself.
 */
export class LogBuffer {
  private readonly limit: LineLimit;
  private readonly maxPendingBytes: number;
  private blocks: Block[] = [];
  private first = 0;
  private blockBytes = 0;
  /** The start of a line still being printed (within the line limit). */
  private partial = '';
  private dropped = { lines: 0, bytes: 0 };

  constructor(limits: Partial<LogBufferLimits> = {}) {
    this.limit = new LineLimit(limits.maxLineBytes ?? DEFAULT_LOG_LINE_MAX_BYTES);
    this.maxPendingBytes = limits.maxPendingBytes ?? DEFAULT_LOG_LIMIT_BYTES;
  }

  append(output: string): void {
    this.add(this.limit.write(output));
  }

  /** A line of the pipeline's own, always starting on a fresh line. */
  line(message: string): void {
    const close = this.limit.open ? `${this.limit.end()}\n` : '';
    this.add(close + this.limit.write(`${message}\n`));
  }

  /** Whether there are whole lines to write. */
  get dirty(): boolean {
    return this.first < this.blocks.length || this.dropped.lines > 0;
  }

  /** What the buffer holds, in bytes (UTF-8): never much more than its limits. */
  get pendingBytes(): number {
    return this.blockBytes + Buffer.byteLength(this.partial);
  }

  /**
   * Takes what is to be written now: the whole lines, or with `all` everything (a line still
   * being printed is ended). It is gone from the buffer either way.
   */
  take(all = false): string {
    const { lines, bytes } = this.dropped;
    let text = lines > 0 ? droppedMarker(lines, bytes) : '';
    for (let i = this.first; i < this.blocks.length; i++) text += this.blocks[i]!.text;
    this.blocks = [];
    this.first = 0;
    this.blockBytes = 0;
    this.dropped = { lines: 0, bytes: 0 };
    if (all && this.limit.open) {
      text += `${this.partial}${this.limit.end()}\n`;
      this.partial = '';
    }
    return text;
  }

  private add(text: string): void {
    const newline = text.lastIndexOf('\n');
    if (newline === -1) {
      this.partial += text;
      return;
    }
    const whole = this.partial + text.slice(0, newline + 1);
    this.partial = text.slice(newline + 1);
    const bytes = Buffer.byteLength(whole);
    this.blocks.push({ text: whole, bytes, lines: countLines(whole) });
    this.blockBytes += bytes;
    if (this.blockBytes > this.maxPendingBytes) this.dropOldest();
  }

  /** Drops the oldest lines until the rest fit: whole blocks, then the first lines of the next. */
  private dropOldest(): void {
    while (this.blockBytes > this.maxPendingBytes) {
      const block = this.blocks[this.first]!;
      const excess = this.blockBytes - this.maxPendingBytes;
      if (block.bytes <= excess) {
        this.drop(block.lines, block.bytes);
        this.first++;
        continue;
      }
      // Up to the end of the line the excess ends in.
      const buffer = Buffer.from(block.text);
      const cut = buffer.indexOf(10, excess - 1) + 1;
      const rest = buffer.subarray(cut).toString('utf8');
      const restLines = countLines(rest);
      this.drop(block.lines - restLines, cut);
      this.blocks[this.first] = { text: rest, bytes: block.bytes - cut, lines: restLines };
    }
    // Spent blocks go once they are half the array, not one by one (shift() is linear).
    if (this.first > 64 && this.first * 2 > this.blocks.length) {
      this.blocks = this.blocks.slice(this.first);
      this.first = 0;
    }
  }

  private drop(lines: number, bytes: number): void {
    this.dropped.lines += lines;
    this.dropped.bytes += bytes;
    this.blockBytes -= bytes;
  }
}
