import type { AppLogs } from '../runtime/app-logs';

/**
 * Copies a release's log into the deployment's as it grows (every `pollMs`), until stop(): what
 * an app prints while it starts.
 */
export function followReleaseLog(
  runtime: AppLogs,
  releaseId: string,
  onText: (text: string) => void,
  pollMs: number,
) {
  let offset = 0;
  let running = true;
  let wake: (() => void) | undefined;
  const readMore = async () => {
    const { text, nextOffset } = await runtime.readLog(releaseId, offset);
    offset = nextOffset;
    if (text) onText(text);
  };
  const loop = (async () => {
    while (running) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      await readMore().catch(() => undefined);
    }
  })();
  return {
    /** Stops following once what was written so far has been read; resolves with the offset. */
    async stop(): Promise<number> {
      if (running) {
        running = false;
        wake?.();
        await loop;
      }
      await readMore().catch(() => undefined);
      return offset;
    },
  };
}
