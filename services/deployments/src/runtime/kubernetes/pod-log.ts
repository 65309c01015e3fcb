/**
 * A release's output from its pods' logs (app-logs.ts), pure: each pod's log as the API server
 * gives it with `timestamps=true` (each line after the time containerd read it, RFC 3339 with
 * nanoseconds, and a space), the lines after an offset, several pods merged by time. The offset
 * is the microseconds since the epoch of the last line already read: a number, as the pipeline
 * keeps offsets (nanoseconds since the epoch are beyond a double's exact integers).
 */

/** One line of a pod's log, without its timestamp or its newline. */
export interface PodLogLine {
  /** Nanoseconds since the epoch: the order of lines across pods. */
  at: bigint;
  text: string;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC 3339 time, or null when it is not one. */
export function parseTimestamp(value: string): bigint | null {
  const match = TIMESTAMP.exec(value);
  if (!match) return null;
  const millis = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(millis)) return null;
  return BigInt(millis) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

/** Microseconds since the epoch: what an offset counts. */
export const microsOf = (at: bigint) => Number(at / 1000n);

/**
 * The ended lines of one pod's log printed after `afterMicros`. The last piece of `text` is a
 * line not yet ended (or nothing): it is left for a later read. The kubelet stamps a line where
 * it begins (a line longer than containerd's 16 KiB comes in pieces, joined again); a piece
 * without a stamp, the end of a line begun before the read's `sinceTime`, has the time of the
 * line before it, or none (it is dropped).
 */
export function parsePodLog(text: string, afterMicros: number): PodLogLine[] {
  const pieces = text.split('\n');
  pieces.pop();
  const lines: PodLogLine[] = [];
  let previous: bigint | null = null;
  for (const piece of pieces) {
    const space = piece.indexOf(' ');
    const at = space < 0 ? parseTimestamp(piece) : parseTimestamp(piece.slice(0, space));
    const line: PodLogLine =
      at === null
        ? { at: previous ?? 0n, text: piece }
        : { at, text: space < 0 ? '' : piece.slice(space + 1) };
    previous = line.at;
    if (microsOf(line.at) > afterMicros) lines.push(line);
  }
  return lines;
}

/**
 * Several pods' lines as one log, by time (each pod's own order kept; equal times in the order of
 * the pods), and the offset to read on from: the last line's time, else `afterMicros`.
 */
export function mergeByTime(
  pods: PodLogLine[][],
  afterMicros: number,
): { text: string; nextOffset: number } {
  const lines = pods.flat().sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const last = lines[lines.length - 1];
  return {
    text: lines.map((line) => `${line.text}\n`).join(''),
    nextOffset: last ? microsOf(last.at) : afterMicros,
  };
}

/**
 * The `sinceTime` of a read after `afterMicros`: its whole second (the API takes seconds), so the
 * read starts at or before the offset and parsePodLog drops what was read already.
 */
export function sinceTimeOf(afterMicros: number): string | undefined {
  if (afterMicros <= 0) return undefined;
  const seconds = Math.floor(afterMicros / 1_000_000);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
