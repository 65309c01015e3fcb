import { get as httpGet } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Release } from './release';

const HEALTH_POLL_MS = 100;
const HEALTH_REQUEST_TIMEOUT_MS = 2_000;

/**
 * The health gate: polls the release's `GET healthCheckPath` until it answers 2xx or 3xx.
 * Resolves with why it failed (its process exited, it was stopped, no such answer within its
 * `healthTimeoutMs`), or undefined once healthy.
 */
export async function waitHealthy(release: Release): Promise<string | undefined> {
  const { healthCheckPath, healthTimeoutMs } = release.spec;
  const deadline = Date.now() + healthTimeoutMs;
  let last = 'no answer';
  for (;;) {
    if (release.stopping) return 'stopped before it answered healthy';
    if (!release.process) return `exited before GET ${healthCheckPath} answered healthy`;
    const status = await healthStatus(release.host, release.port, healthCheckPath);
    if (typeof status === 'number' && status >= 200 && status < 400) return undefined;
    last = typeof status === 'number' ? `status ${status}` : status;
    if (Date.now() >= deadline) {
      return `GET ${healthCheckPath} did not answer 2xx or 3xx within ${healthTimeoutMs} ms (last: ${last})`;
    }
    await delay(HEALTH_POLL_MS);
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
