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
