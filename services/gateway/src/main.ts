import { Agent, createServer } from 'node:http';
import { join } from 'node:path';
import {
  Lifecycle,
  closeHttpServer,
  createLogger,
  createMetrics,
  loadConfig,
} from '@platform/shared';
import { createApp } from './app';
import { gatewayEnv } from './config';
import { createRedis, redisReady } from './redis/redis';

/**
 * Connections the kernel may hold for the gateway before it accepts them (Node's default is 511;
 * the kernel caps it at net.core.somaxconn). A burst of new clients beyond the queue has its
 * connection attempts dropped and retried after 1, 3, 7 s.
 */
const LISTEN_BACKLOG = 4096;

async function main(): Promise<void> {
  const config = loadConfig(gatewayEnv);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger);
  lifecycle.handleSignals();

  const redis = createRedis(config.REDIS_URL, logger);
  lifecycle.onShutdown('redis', () => redis.quit());
  // Start even when Redis is late: /readyz and the 503s say so, and the client keeps trying.
  await redisReady(redis).catch((err: Error) => logger.warn(err.message));

  const agent = new Agent({ keepAlive: true });
  lifecycle.onShutdown('upstream agent', () => agent.destroy());

  const app = createApp({
    config,
    redis,
    logger,
    metrics: createMetrics('gateway'),
    upstreamAgent: agent,
    openApiFile: join(__dirname, '..', 'openapi.json'),
  });
  const server = createServer(app);
  await new Promise<void>((resolve) =>
    server.listen({ port: config.PORT, backlog: LISTEN_BACKLOG }, resolve),
  );
  // Registered last, closed first: in-flight requests finish before Redis and the agent close.
  lifecycle.onShutdown('http', () => closeHttpServer(server));
  logger.info({ port: config.PORT, devIdp: Boolean(config.DEV_IDP_URL) }, 'gateway listening');
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
