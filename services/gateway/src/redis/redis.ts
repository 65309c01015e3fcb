import { Redis } from 'ioredis';
import type { Logger } from '@platform/shared';

/**
 * The gateway's Redis client, tuned to fail fast: with Redis unreachable a command is refused at
 * once (no offline queue, one retry, 1 s timeouts), so a request answers 503 within about a
 * second instead of waiting, and the client keeps reconnecting so sessions come back by
 * themselves when Redis does. Commands issued in the same tick (concurrent requests' session
 * reads and counters) go out in one write: auto-pipelining.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  // One line per outage, not one per reconnection attempt.
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err: { message: err.message } }, 'redis unavailable');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis available again');
  });
  return redis;
}

/** Resolves once the client can take commands, or rejects after `timeoutMs`. */
export function redisReady(redis: Redis, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`redis not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
