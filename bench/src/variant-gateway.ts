/**
 * A gateway process for the gateway-variants experiment: the gateway's own app (createApp from
 * services/gateway, unchanged) and configuration, with two of its injected dependencies varied
 * by environment, so their cost can be measured without editing the service:
 * - BENCH_VARIANT_AUTOPIPELINING=true: its ioredis client with `enableAutoPipelining`, so the
 *   commands of concurrent requests share socket writes;
 * - BENCH_VARIANT_LOG_LEVEL: its logger's level (`warn` drops the per-request success lines,
 *   which the upstream service logs too, with the same request id).
 * Everything else is as services/gateway/src/main.ts and redis/redis.ts set it up.
 */
import { Agent, createServer } from 'node:http';
import path from 'node:path';
import { createApp } from '@platform/gateway/dist/app';
import { gatewayEnv } from '@platform/gateway/dist/config';
import { createLogger, createMetrics, loadConfig } from '@platform/shared';
import { Redis } from 'ioredis';
import { REPO_ROOT } from './lib/env';

const config = loadConfig(gatewayEnv);
const logger = createLogger('gateway', process.env.BENCH_VARIANT_LOG_LEVEL || config.LOG_LEVEL);
// The options of createRedis (services/gateway/src/redis/redis.ts), plus the variant's.
const redis = new Redis(config.REDIS_URL, {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 1_000,
  commandTimeout: 1_000,
  retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  enableAutoPipelining: process.env.BENCH_VARIANT_AUTOPIPELINING === 'true',
});
redis.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis'));
const upstreamAgent = new Agent({ keepAlive: true });
const app = createApp({
  config,
  redis,
  logger,
  metrics: createMetrics('gateway'),
  upstreamAgent,
  openApiFile: path.join(REPO_ROOT, 'services/gateway/openapi.json'),
});
const server = createServer(app);
server.listen(config.PORT, () => process.stderr.write(`variant gateway on ${config.PORT}\n`));
process.once('SIGTERM', () => {
  // As main.ts's lifecycle does: the server first, its dependencies once it has drained.
  server.close(() => {
    upstreamAgent.destroy();
    redis.disconnect();
  });
  server.closeIdleConnections();
});
