import path from 'node:path';

/** The repository root (bench/dist/lib → ../../..). */
export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

/** Ports of the stack a benchmark starts: away from `npm start` (8080/40xx) and e2e (18080/140xx). */
export const BENCH_PORTS = {
  GATEWAY_PORT: '28080',
  AUTH_PORT: '24001',
  PROJECTS_PORT: '24002',
  DEPLOYMENTS_PORT: '24003',
  WEBHOOKS_PORT: '24004',
  DEV_IDP_PORT: '24010',
  RUNTIME_ROUTER_PORT: '24020',
};

const env = (name: string, fallback: string) => process.env[name] || fallback;

/**
 * Where the benchmarks send their traffic. Without BENCH_BASE_URL each benchmark starts its own
 * stack (scripts/start.sh, STACK_NAME=bench) on BENCH_PORTS; with it, it uses the running stack at
 * those URLs and seeds into its databases (`<BENCH_STACK_NAME>_<service>`).
 */
export interface Endpoints {
  gateway: string;
  projects: string;
  deployments: string;
  webhooks: string;
  internalSecret: string;
  /** Prefix of the stack's databases: `<stackName>_projects` etc. */
  stackName: string;
  /** Prefix of the gateway's Redis keys (sessions under `<prefix>sess:`). */
  redisPrefix: string;
}

/** The session secret of a stack we start (a second, profiled gateway must share it). */
export const BENCH_SESSION_SECRET = 'bench-session-secret-0123456789-abcdefghij';

export const externalStack = (): boolean => Boolean(process.env.BENCH_BASE_URL);

export function endpoints(): Endpoints {
  const local = (port: string) => `http://127.0.0.1:${port}`;
  return {
    gateway: env('BENCH_BASE_URL', local(BENCH_PORTS.GATEWAY_PORT)).replace(/\/$/, ''),
    projects: env('BENCH_PROJECTS_URL', local(BENCH_PORTS.PROJECTS_PORT)),
    deployments: env('BENCH_DEPLOYMENTS_URL', local(BENCH_PORTS.DEPLOYMENTS_PORT)),
    webhooks: env('BENCH_WEBHOOKS_URL', local(BENCH_PORTS.WEBHOOKS_PORT)),
    internalSecret: env('BENCH_INTERNAL_SECRET', 'bench-internal-secret-0123456789-abcdefghij'),
    stackName: env('BENCH_STACK_NAME', 'bench'),
    // start.sh does not set REDIS_PREFIX, so a stack we start gets ours through the environment;
    // its sessions are then apart from every other stack's on the shared Redis.
    redisPrefix: env('BENCH_REDIS_PREFIX', externalStack() ? 'gateway:' : 'bench:gateway:'),
  };
}

/** Integer knob from the environment (durations, counts), with a default. */
export function intEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name} must be a positive number`);
  return Math.floor(parsed);
}

/**
 * The infrastructure the benchmarks use. Default `private`: a Redis, Kafka and FerretDB of their
 * own (scripts/infra/infra.sh with its own PLATFORM_RUN_DIR and ports), because the shared ones
 * are restarted by other people's fault tests and carry other stacks' events, which showed up
 * as multi-second stalls in the tails. `BENCH_INFRA=shared` uses the developer servers.
 */
export function infraEnv(): Record<string, string> {
  if (process.env.BENCH_INFRA === 'shared') return {};
  const cache = process.env.XDG_CACHE_HOME || path.join(process.env.HOME || '/tmp', '.cache');
  return {
    PLATFORM_RUN_DIR: path.join(cache, 'platform-dev', 'run-bench'),
    REDIS_PORT: '26379',
    KAFKA_PORT: '29092',
    KAFKA_CONTROLLER_PORT: '29093',
    MONGO_PORT: '27027',
  };
}
