import { randomBytes } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createServer, type RequestListener, type Server } from 'node:http';
import { pino } from 'pino';
import { kafkaEnv } from '../config';
import { IDENTITY_HEADER, signIdentity, type ServiceName } from '../http/identity';
import { kafkaConnection } from '../kafka';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The environment's URLs, as set by the global setup; `kafka` is the brokers with the run's Kafka
 * login (`createKafka({ ...testInfraUrls().kafka, clientId, logger })`).
 */
export function testInfraUrls() {
  const { MONGO_URL, KAFKA_BROKERS, REDIS_URL } = process.env;
  if (!MONGO_URL || !KAFKA_BROKERS || !REDIS_URL) {
    throw new Error(
      'MONGO_URL, KAFKA_BROKERS and REDIS_URL are not set: run tests through jest (global setup).',
    );
  }
  return {
    mongoUrl: MONGO_URL,
    kafkaBrokers: KAFKA_BROKERS.split(','),
    kafka: kafkaConnection(kafkaEnv.parse(process.env)),
    redisUrl: REDIS_URL,
  };
}

/** A unique name per test file (or per call): databases, consumer groups, key prefixes. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export const TEST_INTERNAL_SECRET = 'test-internal-secret-with-at-least-32-characters';

/** A logger that is silent unless TEST_LOG_LEVEL asks otherwise. */
export const testLogger = (name = 'test') =>
  pino({ name, level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** Who a test request acts for, as the gateway would say it: the account, to which service. */
export interface TestIdentity {
  accountId: string;
  /** The service the request is sent to (the identity's audience). */
  audience: ServiceName;
  /** The services' INTERNAL_SECRET: the tests' own unless given. */
  secret?: string;
}

/**
 * The signed identity header for one request, `method url` (an absolute URL: the path and query
 * are signed as sent). Tests pass `identity` to `requestJson`, which calls this; this is for
 * requests made otherwise (a raw `fetch`, a load generator).
 */
export function identityHeaders(
  identity: TestIdentity,
  method: string,
  url: string,
): Record<string, string> {
  const { pathname, search } = new URL(url);
  const target = { aud: identity.audience, method, path: `${pathname}${search}` };
  const secret = identity.secret ?? TEST_INTERNAL_SECRET;
  return { [IDENTITY_HEADER]: signIdentity(identity.accountId, target, secret) };
}

export interface TestServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A TCP port of 127.0.0.1 that nothing listened on a moment ago: for a process a test starts. */
export async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts an express app on an ephemeral port of 127.0.0.1, as it runs in production. */
export async function startTestServer(app: RequestListener): Promise<TestServer> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns a truthy value (which is returned) or the time runs out. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    }
    await delay(intervalMs);
  }
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * fetch with a JSON body in and out; the body is null when there is none. With `identity`, the
 * request carries the identity header signed for its service, method and path.
 */
export async function requestJson<T = any>(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    identity?: TestIdentity;
  } = {},
): Promise<JsonResponse<T>> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = {
    ...(init.identity && identityHeaders(init.identity, method, url)),
    ...init.headers,
  };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, {
    method,
    headers,
    body,
    redirect: 'manual',
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: parseBody(text) as T };
}

/**
 * The body every error answers with (contracts.md: `{error, message, details?}`), for `toEqual`:
 * the message as given, matching a pattern, or any string when omitted.
 */
export function errorBody(error: string, message?: string | RegExp) {
  return {
    error,
    message:
      message === undefined
        ? expect.any(String)
        : typeof message === 'string'
          ? message
          : expect.stringMatching(message),
  };
}

/** A 400 VALIDATION_ERROR body whose details name the field at `path`, among any others. */
export function validationErrorAt(path: string) {
  return {
    ...errorBody('VALIDATION_ERROR'),
    details: expect.arrayContaining([{ path, message: expect.any(String) }]),
  };
}

/** A response body as the tests read it: JSON when it parses, else the text, null when empty. */
export function parseBody(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Starts something (a test server, an app with its connections) before the tests of the
 * enclosing `describe` block, or of the file, and closes it after them. Returns a getter: the
 * started value exists once `beforeAll` has run, so read it inside tests and hooks.
 */
export function useRunning<T extends { close(): Promise<void> | void }>(
  start: () => Promise<T>,
): () => T {
  let running: T | undefined;
  beforeAll(async () => {
    running = await start();
  });
  afterAll(() => running?.close());
  return () => {
    if (!running) throw new Error('useRunning: read it inside a test or hook, after beforeAll');
    return running;
  };
}

/**
 * A server that drops every connection on arrival: what a test calls a service that does not
 * answer. Held for as long as the test needs it: a freed port could be handed to another test's
 * server meanwhile, which would answer.
 */
export async function startDroppingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createTcpServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
