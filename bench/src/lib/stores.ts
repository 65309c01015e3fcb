import { rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { unmountUnder } from '@platform/shared';
import mongoose, { type Connection } from 'mongoose';
import type { Endpoints } from './env';
import { say } from './log';
import type { InfraUrls } from './stack';

export const SERVICES = ['auth', 'projects', 'deployments', 'webhooks'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The database a service of the stack uses: `<STACK_NAME>_<service>` (scripts/start.sh). */
export const dbName = (stackName: string, service: ServiceName) => `${stackName}_${service}`;

/** A plain driver connection to the stack's MongoDB (FerretDB), for seeding and counting. */
export async function connectMongo(url: string): Promise<Connection> {
  return mongoose
    .createConnection(url, { maxPoolSize: 20, serverSelectionTimeoutMS: 10_000 })
    .asPromise();
}

export function connectRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: false });
}

/** Deletes every key under `prefix` (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/**
 * A clean slate for a stack we start: its four databases dropped and its gateway keys deleted,
 * so earlier runs' documents (and full-collection scans over them) do not colour this one.
 */
export async function resetStack(urls: InfraUrls, where: Endpoints): Promise<void> {
  const connection = await connectMongo(urls.mongoUrl);
  try {
    for (const service of SERVICES) {
      await connection.useDb(dbName(where.stackName, service)).dropDatabase();
    }
  } finally {
    await connection.close();
  }
  const redis = connectRedis(urls.redisUrl);
  try {
    const keys = await deleteKeys(redis, where.redisPrefix);
    say(`reset: dropped ${where.stackName}_* databases, deleted ${keys} Redis keys`);
  } finally {
    redis.disconnect();
  }
  // The stack's builds (scripts/start.sh's BUILDS_DIR), each on a disk of its own, mounted.
  const builds = path.join(
    process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'),
    `platform-dev/run/${where.stackName}-builds`,
  );
  await unmountUnder(builds);
  await rm(builds, { recursive: true, force: true });
}
