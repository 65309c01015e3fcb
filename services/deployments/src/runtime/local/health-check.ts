import { get as httpGet } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Copy } from './copy';
import type { Release } from './release';

const HEALTH_REQUEST_TIMEOUT_MS = 2_000;

/**
 * The wait before the next health probe of a copy started `elapsedMs` ago: 5 ms in its first
 * second (an app usually listens within a few hundred ms, and a refused connection costs next to
 * nothing), 25 ms until 5 s, then 100 ms.
 */
export function healthPollDelay(elapsedMs: number): number {
  if (elapsedMs < 1_000) return 5;
  return elapsedMs < 5_000 ? 25 : 100;
}

/**
 * The health gate of a release: every copy must answer `GET healthCheckPath` 2xx or 3xx.
 * Resolves with why it failed (the first copy that failed, named when there are several), or
 * undefined once all are healthy; `onHealthy` hears of each copy as it passes.
 */
export async function waitAllHealthy(
  release: Release,
  onHealthy: (copy: Copy) => void,
): Promise<string | undefined> {
  let failure: string | undefined;
  await Promise.all(
    release.copies.map(async (copy) => {
      const why = await waitHealthy(release, copy, () => failure !== undefined);
      if (why === undefined) onHealthy(copy);
      else failure ??= `${copy.label}${why}`;
    }),
  );
  return failure;
}

/** The health check of one copy restarted after a crash: undefined once healthy, else why not. */
export const waitCopyHealthy = (release: Release, copy: Copy) =>
  waitHealthy(release, copy, () => false);

/**
 * Polls one copy until it answers healthy (undefined), or says why not: its process exited, the
 * release was stopped, `abandoned()` (another copy failed), or no such answer within the
 * release's `healthTimeoutMs`.
 */
async function waitHealthy(
  release: Release,
  copy: Copy,
  abandoned: () => boolean,
): Promise<string | undefined> {
  const { healthCheckPath, healthTimeoutMs } = release.spec;
  const started = Date.now();
  const deadline = started + healthTimeoutMs;
  let last = 'no answer';
  for (;;) {
    if (release.stopping) return 'stopped before it answered healthy';
    if (abandoned()) return 'another copy failed';
    if (!copy.process) return `exited before GET ${healthCheckPath} answered healthy`;
    const status = await healthStatus(copy.host, copy.port, healthCheckPath);
    if (typeof status === 'number' && status >= 200 && status < 400) return undefined;
    last = typeof status === 'number' ? `status ${status}` : status;
    if (Date.now() >= deadline) {
      return `GET ${healthCheckPath} did not answer 2xx or 3xx within ${healthTimeoutMs} ms (last: ${last})`;
    }
    await delay(healthPollDelay(Date.now() - started));
  }
}

/** The status of one `GET path`, or why there was none. */
function healthStatus(host: string, port: number, healthPath: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpGet(
      {
        host,
        port,
        path: healthPath,
        agent: false,
        timeout: HEALTH_REQUEST_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 'no status');
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}
