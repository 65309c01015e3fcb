import type { Connection, mongo } from 'mongoose';
import { connectMongo } from '@platform/shared';
import { testInfraUrls, testLogger, uniqueName } from '@platform/shared/testing';

/**
 * One test file's own database (a `uniqueName`), reached through the project's `connectMongo`,
 * plus as many further connections to it as a race needs: each is its own client with its own
 * pool and sockets, so commands sent to different ones really are in flight together.
 */
export interface TestDatabase {
  name: string;
  connection: Connection;
  db: mongo.Db;
  /** `count` connections (the first is `connection`), each warmed up by a ping. */
  connections(count: number): Promise<Connection[]>;
  /** The same collection through each of `count` connections. */
  collections(name: string, count: number): Promise<mongo.Collection[]>;
  /** Drops the database and closes every connection. */
  drop(): Promise<void>;
}

export async function openTestDatabase(prefix: string): Promise<TestDatabase> {
  const url = testInfraUrls().mongoUrl;
  const name = uniqueName(prefix);
  const open = () => connectMongo({ url, dbName: name, logger: testLogger('conformance') });
  const connection = await open();
  const pool: Connection[] = [connection];
  const nativeDb = (c: Connection): mongo.Db => {
    if (!c.db) throw new Error('mongo is not connected');
    return c.db;
  };

  const connections = async (count: number) => {
    while (pool.length < count) pool.push(await open());
    const chosen = pool.slice(0, count);
    // A socket per client before the first race, so no round waits on a handshake.
    await Promise.all(chosen.map((c) => nativeDb(c).command({ ping: 1 })));
    return chosen;
  };

  return {
    name,
    connection,
    db: nativeDb(connection),
    connections,
    collections: async (collection, count) =>
      (await connections(count)).map((c) => nativeDb(c).collection(collection)),
    drop: async () => {
      try {
        await nativeDb(connection).dropDatabase();
      } finally {
        await Promise.all(pool.map((c) => c.close()));
      }
    },
  };
}

/** The server's error code of a rejection (11000 for a duplicate key), if it has one. */
export const errorCode = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/** How a rejection reads in a failure message. */
export function describeError(err: unknown): string {
  const e = err as { name?: string; code?: unknown; message?: string } | null;
  return `${e?.name ?? 'Error'}${e?.code !== undefined ? ` code ${String(e.code)}` : ''}: ${
    e?.message ?? String(err)
  }`;
}

/** A small seeded generator (mulberry32): the same data on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
