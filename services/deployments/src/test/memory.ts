import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * The most a process's resident memory grew above where it was when the watch began, sampled
 * every `everyMs` until stop(): what a test asserts is bounded while something runs. Resident
 * memory, not the heap alone, so buffers and strings outside the heap count too.
 */
export function watchMemory(rssOf: () => number = () => process.memoryUsage().rss, everyMs = 20) {
  const start = rssOf();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf());
  }, everyMs);
  return {
    /** The peak growth in bytes. */
    stop(): number {
      clearInterval(timer);
      peak = Math.max(peak, rssOf());
      return peak - start;
    },
  };
}

export const MiB = 1024 * 1024;

/**
 * What the process holds now: its heap and its buffers right after a full garbage collection.
 * Resident memory also counts garbage not collected yet, which a process whose heap is sized from
 * this 24 GiB machine collects late (a build Job's flood arrives line by line through the API
 * server, and the garbage of its transport alone grew resident memory by 1.6 GiB under CI's
 * load); a deployed service's heap is capped below its memory limit (k8s/), which bounds that.
 */
export function liveMemory(): number {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

let gc: (() => void) | undefined;

/** A full garbage collection (V8's `gc`, exposed to this process the first time). */
function collectGarbage() {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
