import type { Harness } from './harness';
import { MiB, watchLiveMemory, watchMemory } from './memory';

/**
 * What a build's output may cost the deployments service (issue 21, "Output"), for every runtime
 * (pipeline/output.test.ts: the local sandbox; output.kubernetes.test.ts: a build Job's). The
 * service runs in the test process, so its memory is the process's: resident, or with `live`
 * what survives V8's major collections (a build Job's output arrives a line per HTTP chunk,
 * garbage a heap sized from this machine collects late: watchLiveMemory).
 */

/** Far below what any of these builds prints: the service holds none of it for long. */
export const MEMORY_BOUND = 96 * MiB;

/**
 * The checks of a harness whose log cuts lines at `lineMaxBytes`, each deployment given
 * `waitMs` to be DEPLOYED.
 */
export function outputLimits(
  h: Harness,
  { lineMaxBytes, waitMs, live = false }: { lineMaxBytes: number; waitMs: number; live?: boolean },
) {
  return {
    /** Builds `printer` (then the fixture app) to DEPLOYED; its log and how much memory grew. */
    async deployPrinting(printer: string) {
      const { service, id } = await h.newDeployment(
        {},
        { buildCommand: `${printer}; echo; node build.js` },
      );
      const memory = live ? watchLiveMemory() : watchMemory();
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', waitMs);
      return { service, id, logs: deployed.logs as string, grewBy: memory.stop() };
    },
    /** No line of the log over the line limit, the log within its limit, the memory growth bounded. */
    expectWithinLimits(logs: string, grewBy: number) {
      const longest = Math.max(...logs.split('\n').map((line) => Buffer.byteLength(line)));
      expect(longest).toBeLessThanOrEqual(lineMaxBytes);
      expect(Buffer.byteLength(logs)).toBeLessThanOrEqual(h.config.LOG_LIMIT_BYTES + 1024);
      expect(grewBy).toBeLessThan(MEMORY_BOUND);
    },
  };
}
