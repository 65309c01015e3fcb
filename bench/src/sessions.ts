/**
 * Benchmark 5, sessions: 1,000 accounts signed in through the development identity provider
 * (as the sign-in page does it, through the gateway), then 1,000 concurrent sessions, one
 * connection each, doing authenticated reads (`GET /api/accounts/me`, each its own account) for
 * 20 s. Reports throughput and latency, and Redis memory per session: INFO memory before and
 * after the sign-ins divided by the sessions, and MEMORY USAGE of session keys. The gateway's
 * keys live under their own prefix (bench:gateway:) on the benchmark's own Redis.
 *
 * A second run sends the same reads over 50 connections, each request taking the next of the
 * 1,000 sessions in turn: all sessions stay in use, without 1,000 requests queueing at once.
 */
import type autocannon from 'autocannon';
import { GatewayClient } from '@platform/shared/testing';
import { cpuMeter, stackAndInfraPids, perRequest } from './lib/cpu';
import { intEnv } from './lib/env';
import { load } from './lib/load';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack } from './lib/stack';
import { connectRedis, resetStack } from './lib/stores';

const SESSIONS = intEnv('BENCH_SESSIONS', 1_000);
const DURATION_S = intEnv('BENCH_DURATION_S', 20);
const SIGN_IN_CONCURRENCY = intEnv('BENCH_SIGN_IN_CONCURRENCY', 8);
const ROTATING_CONNECTIONS = intEnv('BENCH_ROTATING_CONNECTIONS', 50);
const SESSION_COOKIE = 'platform.sid';
const READ = '/api/accounts/me';

/** `used_memory` and friends from INFO memory. */
async function redisMemory(redis: ReturnType<typeof connectRedis>) {
  const info = await redis.info('memory');
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
  return { usedMemory: field('used_memory'), usedMemoryDataset: field('used_memory_dataset') };
}

/** Counts the gateway's keys by kind (sess:, rl:<limit>:; docs/rate-limits.md). */
async function keyCounts(redis: ReturnType<typeof connectRedis>, prefix: string) {
  const counts: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      const kind = /^(sess:|rl:[\w-]+:)/.exec(rest)?.[1];
      counts[kind ?? 'other'] = (counts[kind ?? 'other'] ?? 0) + 1;
    }
  } while (cursor !== '0');
  return counts;
}

main('sessions', 1200, async () => {
  const stack = await startStack({ reset: resetStack });
  const redis = connectRedis(stack.redisUrl);
  const run = Date.now().toString(36);

  // One sign-in first, so lazily created things (connections, scripts) are not counted.
  await new GatewayClient(stack.gateway).signIn(`bench-sessions-${run}-warm@example.test`);
  const before = await redisMemory(redis);
  const keysBefore = await keyCounts(redis, stack.redisPrefix);

  say(`signing in ${SESSIONS} accounts, ${SIGN_IN_CONCURRENCY} at a time`);
  const clients: GatewayClient[] = [];
  const signInStarted = Date.now();
  // Sign-ins get slower as accounts accumulate (auth's upsert by subject is a scan on FerretDB).
  const signInMarks: { signedIn: number; seconds: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SIGN_IN_CONCURRENCY }, async () => {
      while (next < SESSIONS) {
        const i = next++;
        const client = new GatewayClient(stack.gateway);
        await client.signIn(`bench-sessions-${run}-${i}@example.test`, `Bench Person ${i}`);
        clients[i] = client;
        if ((i + 1) % 250 === 0) {
          signInMarks.push({
            signedIn: i + 1,
            seconds: ms((Date.now() - signInStarted) / 1000, 1),
          });
          say(`${i + 1} signed in`);
        }
      }
    }),
  );
  const signInS = (Date.now() - signInStarted) / 1000;
  const afterSignIn = await redisMemory(redis);
  const keysAfterSignIn = await keyCounts(redis, stack.redisPrefix);

  // The session keys themselves: `<prefix>sess:<id>`, the id inside the signed cookie
  // (`s:<id>.<signature>`, URL-encoded).
  const sessionIdOf = (client: GatewayClient) =>
    decodeURIComponent(client.cookie(SESSION_COOKIE) ?? '')
      .replace(/^s:/, '')
      .replace(/\..*$/, '');
  const sampleKeys = [0, 1, 2, SESSIONS >> 1, SESSIONS - 1].map(
    (i) => `${stack.redisPrefix}sess:${sessionIdOf(clients[i]!)}`,
  );
  const memoryUsage: number[] = [];
  for (const key of sampleKeys) {
    const bytes = await redis.memory('USAGE', key);
    if (typeof bytes !== 'number') throw new Error(`no session key ${key}`);
    memoryUsage.push(bytes);
  }
  const sessionValue = await redis.get(sampleKeys[0]!);
  const ttlSeconds = await redis.ttl(sampleKeys[0]!);

  const cookies = clients.map((c) => c.cookieHeader());
  const pids = await stackAndInfraPids(stack);

  // 1,000 connections, one session each.
  let assigned = 0;
  const meter = cpuMeter(pids);
  const concurrent = await load({
    label: `${SESSIONS} sessions, one connection each`,
    url: `${stack.gateway}${READ}`,
    connections: SESSIONS,
    durationS: DURATION_S,
    setupClient: (client) => {
      client.setHeaders({ accept: 'application/json', cookie: cookies[assigned++ % SESSIONS]! });
    },
  });
  const concurrentCpu = perRequest(meter.stop(), concurrent.result.requests);
  const afterLoad = await redisMemory(redis);
  const keysAfterLoad = await keyCounts(redis, stack.redisPrefix);

  // The same reads over fewer connections, every request the next session in turn.
  let turn = 0;
  const rotatingMeter = cpuMeter(pids);
  const rotating = await load({
    label: `${SESSIONS} sessions over ${ROTATING_CONNECTIONS} connections`,
    url: `${stack.gateway}${READ}`,
    connections: ROTATING_CONNECTIONS,
    durationS: DURATION_S,
    requests: [
      {
        method: 'GET',
        path: READ,
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          headers: { accept: 'application/json', cookie: cookies[turn++ % SESSIONS]! },
        }),
      },
    ],
  });
  const rotatingCpu = perRequest(rotatingMeter.stop(), rotating.result.requests);
  redis.disconnect();

  const perSessionBytes = Math.round((afterSignIn.usedMemory - before.usedMemory) / SESSIONS);
  const meanKeyBytes = Math.round(memoryUsage.reduce((a, b) => a + b, 0) / memoryUsage.length);
  say(`Redis: ${perSessionBytes} bytes per session (INFO), MEMORY USAGE of a key ${meanKeyBytes}`);
  const verdicts = [
    verdict(
      'non-2xx answers with 1,000 sessions',
      concurrent.result.non2xx + concurrent.result.errors,
      '<',
      1,
    ),
    verdict('non-2xx answers, rotating', rotating.result.non2xx + rotating.result.errors, '<', 1),
  ];
  writeResults('sessions', {
    request: `GET ${READ} (through the gateway, each session its own account)`,
    settings: {
      sessions: SESSIONS,
      durationS: DURATION_S,
      rotatingConnections: ROTATING_CONNECTIONS,
    },
    signIn: { seconds: ms(signInS, 1), perSecond: ms(SESSIONS / signInS, 1), marks: signInMarks },
    summary: {
      concurrent: {
        connections: SESSIONS,
        throughput: concurrent.result.throughput,
        latencyMs: concurrent.result.latencyMs,
        cpuMsPerRequest: concurrentCpu,
      },
      rotating: {
        connections: ROTATING_CONNECTIONS,
        throughput: rotating.result.throughput,
        latencyMs: rotating.result.latencyMs,
        cpuMsPerRequest: rotatingCpu,
      },
      redis: {
        bytesPerSessionFromInfo: perSessionBytes,
        memoryUsageOfSessionKey: { samples: memoryUsage, mean: meanKeyBytes },
        sessionValueBytes: sessionValue?.length ?? null,
        sessionValue,
        sessionTtlSeconds: ttlSeconds,
        usedMemory: { before, afterSignIn, afterLoad },
        bytesPerSessionAfterLoad: Math.round((afterLoad.usedMemory - before.usedMemory) / SESSIONS),
        keys: { before: keysBefore, afterSignIn: keysAfterSignIn, afterLoad: keysAfterLoad },
      },
    },
    verdicts,
    runs: { concurrent: concurrent.result, rotating: rotating.result },
  });
});
