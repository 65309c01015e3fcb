import { Agent } from 'node:http';
import { join } from 'node:path';
import type { Runtime } from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { createRedis, redisReady } from './redis/redis';

/** What a test sets that is not configuration: nothing a deployment would ever change. */
export interface Seams {
  /**
   * The OpenAPI document ships beside the code (services/gateway/openapi.json); a test serves
   * one of its own.
   */
  openApiFile?: string;
  /** The dashboard's build; by default apps/dashboard/dist of this repository (or image). */
  dashboardDir?: string;
}

/**
 * The gateway's composition root, for main.ts and the tests alike: Redis, the keep-alive agents
 * to the services and to the apps' router, and the app.
 */
export async function compose(config: Config, { logger, lifecycle }: Runtime, seams: Seams = {}) {
  const redis = createRedis(config.REDIS_URL, logger);
  lifecycle.onShutdown('redis', () => redis.quit());
  // Start even when Redis is late: /readyz and the 503s say so, and the client keeps trying.
  await redisReady(redis).catch((err: Error) => logger.warn(err.message));

  const upstreamAgent = new Agent({ keepAlive: true });
  lifecycle.onShutdown('upstream agent', () => upstreamAgent.destroy());
  const appsAgent = new Agent({ keepAlive: true });
  lifecycle.onShutdown('apps agent', () => appsAgent.destroy());

  if (config.DEV_IDP_URL) logger.info({ devIdp: config.DEV_IDP_URL }, 'dev-idp served at /dev/');
  const app = createApp({
    config,
    redis,
    logger,
    upstreamAgent,
    appsAgent,
    openApiFile: seams.openApiFile ?? join(__dirname, '..', 'openapi.json'),
    dashboardDir: seams.dashboardDir ?? join(__dirname, '..', '..', '..', 'apps/dashboard/dist'),
    stopping: lifecycle.stopping,
  });
  return { app, redis };
}
