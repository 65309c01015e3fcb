import { execFile, spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  BENCH_PORTS,
  BENCH_SESSION_SECRET,
  REPO_ROOT,
  endpoints,
  externalStack,
  infraEnv,
  type Endpoints,
} from './env';
import { say } from './log';
import { waitForOutput } from '@platform/shared/testing';
import { setTimeout as delay } from 'node:timers/promises';

const execute = promisify(execFile);
/** infra.sh with the benchmark's infrastructure settings (see infraEnv). */
const run = (command: string, args: string[], options: { timeout: number }) =>
  execute(command, args, { ...options, env: { ...process.env, ...infraEnv() } });
const INFRA = path.join(REPO_ROOT, 'scripts/infra/infra.sh');
const COMPONENTS = ['redis', 'kafka', 'mongo'] as const;
const START_TIMEOUT_MS = 300_000;

export interface InfraUrls {
  mongoUrl: string;
  redisUrl: string;
  kafkaBrokers: string;
  /**
   * The Kafka logins `infra.sh url` gives (KAFKA_SASL_*: the admin's, and each service's as
   * KAFKA_SASL_PASSWORD_<SERVICE>, which start.sh hands to each service); with BENCH_KAFKA_BROKERS,
   * those of the environment.
   */
  kafkaLogin: Record<string, string>;
}

export interface Stack extends Endpoints, InfraUrls {
  /** The environment the stack's processes were started with (empty for BENCH_BASE_URL). */
  env: Record<string, string>;
  /** Log files of the stack's processes (a stack we started), for profiling notes. */
  logDir?: string;
  /** pids of the stack's processes by name, as start.sh printed them. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

async function isRunning(component: string): Promise<boolean> {
  try {
    await run('bash', [INFRA, 'status', component], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** The infrastructure URLs: BENCH_MONGO_URL etc. when given, else scripts/infra/infra.sh url. */
export async function infraUrls(): Promise<InfraUrls> {
  const { stdout } = await run('bash', [INFRA, 'url', 'all'], { timeout: 30_000 });
  const vars = Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    mongoUrl: process.env.BENCH_MONGO_URL || vars.MONGO_URL || 'mongodb://127.0.0.1:27017',
    redisUrl: process.env.BENCH_REDIS_URL || vars.REDIS_URL || 'redis://127.0.0.1:6379',
    kafkaBrokers: process.env.BENCH_KAFKA_BROKERS || vars.KAFKA_BROKERS || '127.0.0.1:9092',
    kafkaLogin: Object.fromEntries(
      Object.entries<string | undefined>(
        process.env.BENCH_KAFKA_BROKERS ? process.env : vars,
      ).filter(
        (entry): entry is [string, string] => /^KAFKA_(SASL_|TLS)/.test(entry[0]) && !!entry[1],
      ),
    ),
  };
}

const stoppers: (() => Promise<void>)[] = [];
/** Log directories of the stacks started, kept when a benchmark fails. */
const logDirs = new Set<string>();
let signalsHandled = false;

/** Ctrl-C or SIGTERM stops what the benchmark started before it exits. */
function handleSignals() {
  if (signalsHandled) return;
  signalsHandled = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping what this benchmark started`);
      void stopAll().finally(() => process.exit(130));
    });
  }
}

export async function stopAll(): Promise<void> {
  while (stoppers.length > 0) await stoppers.pop()!().catch(() => undefined);
}

export interface StartOptions {
  /**
   * Added to the stack's environment (LOG_LEVEL, NODE_OPTIONS, WEBHOOK_RETRY_SCHEDULE...). The
   * deployments service no longer reads BUILD_COMMAND/DEPLOY_COMMAND: its simulated steps are gone.
   */
  env?: Record<string, string>;
  /**
   * Before starting: drop the stack's databases and Redis keys, so every run starts from the
   * same empty state (only for a stack we start; never for BENCH_BASE_URL).
   */
  reset?: (urls: InfraUrls, endpoints: Endpoints) => Promise<void>;
}

/**
 * Starts the whole platform with scripts/start.sh (STACK_NAME=bench, BENCH_PORTS) and waits until
 * it is ready, or uses the stack at BENCH_BASE_URL. Infrastructure servers that were not running
 * are started here and stopped again by stop(); ones already running are left alone.
 */
export async function startStack(options: StartOptions = {}): Promise<Stack> {
  handleSignals();
  // The infrastructure is shared: another engineer's fault test may restart Kafka or Mongo
  // while the stack boots, which stops start.sh. Try again a few times before giving up.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(options);
    } catch (err) {
      if (attempt >= 3 || externalStack()) throw err;
      const tail = (err as Error).message.split('\n').slice(-3).join(' | ');
      say(`the stack did not start (attempt ${attempt}): ${tail.slice(0, 300)}; retrying in 15 s`);
      await delay(15_000);
    }
  }
}

async function startStackOnce(options: StartOptions): Promise<Stack> {
  const where = endpoints();
  if (externalStack()) {
    say(`using the running stack at ${where.gateway} (BENCH_BASE_URL)`);
    return { ...where, ...(await infraUrls()), env: {}, pids: {}, stop: async () => undefined };
  }

  const notRunning: string[] = [];
  for (const c of COMPONENTS) if (!(await isRunning(c))) notRunning.push(c);
  if (notRunning.length > 0) {
    const runDir = infraEnv().PLATFORM_RUN_DIR ?? 'the shared servers';
    say(`starting infrastructure: ${notRunning.join(', ')} in ${runDir} (stopped at the end)`);
    await run('bash', [INFRA, 'start', 'all'], { timeout: 600_000 });
    stoppers.push(async () => {
      for (const c of notRunning) {
        say(`stopping ${c} (this benchmark started it)`);
        await run('bash', [INFRA, 'stop', c], { timeout: 120_000 }).catch(() => undefined);
      }
    });
  }
  const urls = await infraUrls();
  if (options.reset) await options.reset(urls, where);

  const stackEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...BENCH_PORTS,
    STACK_NAME: where.stackName,
    INTERNAL_SECRET: where.internalSecret,
    // A fake key (base64 of "bench-bench-…"): projects seals secret variables with it.
    ENCRYPTION_KEY: 'bench:YmVuY2gtYmVuY2gtYmVuY2gtYmVuY2gtYmVuY2gtYmU=',
    SESSION_SECRET: BENCH_SESSION_SECRET,
    // Given, so start.sh neither starts nor stops the (shared) infrastructure itself.
    MONGO_URL: urls.mongoUrl,
    REDIS_URL: urls.redisUrl,
    KAFKA_BROKERS: urls.kafkaBrokers,
    ...urls.kafkaLogin,
    REDIS_PREFIX: where.redisPrefix,
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'info',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // A benchmark is one client hammering one session: the limits would measure 429s.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    LOGIN_RATE_LIMIT_PER_MINUTE: '1000000000',
    DEPLOY_RATE_LIMIT: '1000000000',
    WEBHOOK_TEST_RATE_LIMIT: '1000000000',
    REDELIVER_RATE_LIMIT: '1000000000',
    ...options.env,
  };
  say(`starting the stack (scripts/start.sh, STACK_NAME=${where.stackName}, gateway :28080)`);
  const child = spawn('bash', [path.join(REPO_ROOT, 'scripts/start.sh')], {
    cwd: REPO_ROOT,
    env: stackEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: if start.sh will not stop, its whole group can be.
    detached: true,
  });
  const pids: Record<string, number> = {};
  let logDir: string | undefined;
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    for (const match of text.matchAll(/\[start\] (\S+): pid (\d+) .*\(log: (.*)\/[^/]+\.log\)/g)) {
      pids[match[1]!] = Number(match[2]);
      logDir = match[3];
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    say('stopping the stack');
    child.kill('SIGTERM');
    const timeout = delay(40_000, 'timeout' as const, { ref: false });
    if ((await Promise.race([exited, timeout])) === 'timeout') {
      say('the stack did not stop in 40 s: SIGKILL to its process group');
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    say('stack stopped');
  };
  stoppers.push(stop);

  await waitForOutput(child, 'Platform ready at', {
    timeoutMs: START_TIMEOUT_MS,
    what: 'the stack',
  });
  say(
    `stack ready (${Object.entries(pids)
      .map(([n, p]) => `${n}=${p}`)
      .join(' ')})`,
  );
  return { ...where, ...urls, env: stackEnv, logDir, pids, stop };
}

/**
 * Runs a benchmark: the whole thing is bounded by BENCH_TIME_LIMIT_S (default `limitS`), and
 * whatever it started is stopped on the way out, on success, failure or timeout alike.
 */
export function main(name: string, limitS: number, body: () => Promise<void>): void {
  const limit = Number(process.env.BENCH_TIME_LIMIT_S) || limitS;
  const watchdog = setTimeout(() => {
    say(`${name}: over its time limit of ${limit} s; stopping`);
    void stopAll().finally(() => process.exit(2));
  }, limit * 1000);
  watchdog.unref();
  body()
    .then(async () => {
      await stopAll();
      say(`${name}: done`);
      process.exit(0);
    })
    .catch(async (err: unknown) => {
      say(`${name} failed: ${(err as Error).stack ?? String(err)}`);
      await stopAll();
      // start.sh truncates its logs at the next start: keep this run's for a look.
      for (const dir of logDirs) {
        const kept = `${dir}-${name}-failed-${Date.now()}`;
        cpSync(dir, kept, { recursive: true });
        say(`the stack's logs are kept in ${kept}`);
      }
      process.exit(1);
    });
}

/** The environment start.sh gives the stack's gateway, for another gateway process on `port`. */
export function gatewayProcessEnv(stack: Stack, port: number): Record<string, string> {
  const local = (p: string) => `http://127.0.0.1:${p}`;
  return {
    ...stack.env,
    PORT: String(port),
    GATEWAY_PORT: String(port),
    AUTH_URL: local(BENCH_PORTS.AUTH_PORT),
    PROJECTS_URL: local(BENCH_PORTS.PROJECTS_PORT),
    DEPLOYMENTS_URL: local(BENCH_PORTS.DEPLOYMENTS_PORT),
    WEBHOOKS_URL: local(BENCH_PORTS.WEBHOOKS_PORT),
    DEV_IDP_URL: local(BENCH_PORTS.DEV_IDP_PORT),
    PUBLIC_URL: `http://localhost:${port}`,
  };
}
