import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
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
 * What the process held at most while something ran: its heap and buffers right after each of
 * V8's own major collections, and after one forced at the start and at stop(). Resident memory
 * also counts garbage not collected yet, which a process whose heap is sized from this 24 GiB
 * machine collects late (a build Job's flood arrives a line per HTTP chunk through the API
 * server, and its transport's garbage alone grew resident memory by 1.6 GiB under CI's load); a
 * deployed service's heap is capped below its memory limit (k8s/), which bounds that. No
 * collection is forced in between: a full collection every few hundred ms starved the service
 * in the same process under CI's load.
 */
export function watchLiveMemory() {
  const held = () => {
    const { heapUsed, external } = process.memoryUsage();
    return heapUsed + external;
  };
  collectGarbage();
  const start = held();
  let peak = start;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) peak = Math.max(peak, held());
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    /** The peak growth in bytes. */
    stop(): number {
      observer.disconnect();
      collectGarbage();
      peak = Math.max(peak, held());
      return peak - start;
    },
  };
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
