import { Router } from 'express';

/** A readiness check resolves when its dependency answers and rejects otherwise. */
export type ReadinessCheck = () => Promise<unknown>;

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}

/**
 * `/healthz`: the process is up (liveness). `/readyz`: every dependency answers (readiness);
 * 503 with the failing checks otherwise, so a load balancer stops sending traffic.
 */
export function healthRouter(checks: Record<string, ReadinessCheck>): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(Promise.resolve().then(check), CHECK_TIMEOUT_MS);
          return { name, ok: true as const };
        } catch (err) {
          return { name, ok: false as const, message: (err as Error).message };
        }
      }),
    );
    const failed = results.filter((r) => !r.ok);
    if (failed.length === 0) {
      res.json({ status: 'ok', checks: Object.fromEntries(results.map((r) => [r.name, 'ok'])) });
      return;
    }
    res.status(503).json({
      error: 'SERVICE_UNAVAILABLE',
      message: `Not ready: ${failed.map((f) => f.name).join(', ')} did not answer.`,
      details: failed.map((f) => ({ path: f.name, message: f.message ?? 'failed' })),
    });
  });
  return router;
}
