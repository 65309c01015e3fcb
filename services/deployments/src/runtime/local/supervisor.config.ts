import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { baseEnv, durationEnv, portEnv } from '@platform/shared';
import {
  cpuLimitEnv,
  memoryLimitEnv,
  processLimitEnv,
  sandboxEnv,
  tmpLimitEnv,
} from '../../sandbox/sandbox.env';
import { DEFAULT_LOG_LINE_MAX_BYTES } from '../../pipeline/line-limit';

/** Where the local runtime keeps its socket and release logs unless RUNTIME_DIR says otherwise. */
export const defaultRuntimeDir = () => path.join(homedir(), '.cache/platform-dev/runtime');

/** The router's port unless RUNTIME_ROUTER_PORT says otherwise (the gateway's RUNTIME_ROUTER_URL). */
export const DEFAULT_ROUTER_PORT = 4020;

/**
 * The runtime's own settings (apps' limits, restarts, stops), read by the supervisor and by the
 * deployments service, which starts the supervisor with them (supervisorEnvOf).
 */
export const runtimeEnv = z.object({
  /** Memory of an app, all its processes together, swap and its /tmp included. */
  RUNTIME_APP_MEMORY_BYTES: memoryLimitEnv(512 * 1024 ** 2),
  /** CPU of an app (1 = one core). */
  RUNTIME_APP_CPUS: cpuLimitEnv(1),
  /** Processes and threads of one app at once. */
  RUNTIME_APP_PROCESSES: processLimitEnv(512),
  /** The size of an app's /tmp (memory: it counts towards RUNTIME_APP_MEMORY_BYTES). */
  RUNTIME_APP_TMP_BYTES: tmpLimitEnv(64 * 1024 ** 2),
  /**
   * The longest line of a log, in bytes: a longer line a build or an app prints is cut, and ends
   * with a marker giving its length. At most 128 KiB, so a line fits in one read of a release log.
   */
  LOG_LINE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024, 'must be at least 1024')
    .max(128 * 1024, 'must be at most 131072')
    .default(DEFAULT_LOG_LINE_MAX_BYTES),
  /**
   * The most a release's log takes on disk (`logs/<releaseId>.log` and `.log.1`): an app that
   * prints forever loses its oldest output first.
   */
  RUNTIME_LOG_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024 ** 2, 'must be at least 1048576')
    .default(64 * 1024 ** 2),
  /**
   * How long a stopped or failed release is still described and its log read (the deployments
   * service reads its last lines within seconds); then it is forgotten and its log deleted.
   */
  RUNTIME_RELEASE_RETENTION: durationEnv('10m', { min: '100ms' }),
  /** The unix socket of the control API, and the release logs (`logs/<releaseId>.log`). */
  RUNTIME_DIR: z.string().min(1).default(defaultRuntimeDir()),
  /** The router: `http://<serviceId>.<anything>:<port>` reaches the service's live release. */
  RUNTIME_ROUTER_PORT: portEnv(DEFAULT_ROUTER_PORT),
  /** The router's address: this machine only unless a container sets 0.0.0.0 (docker-compose). */
  RUNTIME_ROUTER_HOST: z.string().min(1).default('127.0.0.1'),
  /** Delay before the first restart of a crashed app; doubled for each further one. */
  RUNTIME_RESTART_BACKOFF: durationEnv('1s'),
  /** The longest delay between restarts. */
  RUNTIME_RESTART_BACKOFF_MAX: durationEnv('30s'),
  /** Restarts allowed within RUNTIME_RESTART_WINDOW; one more crash and the app stays down. */
  RUNTIME_RESTART_LIMIT: z.coerce.number().int().min(0).default(5),
  RUNTIME_RESTART_WINDOW: durationEnv('10m'),
  /** After SIGTERM, how long an app gets before SIGKILL. */
  RUNTIME_STOP_GRACE: durationEnv('5s'),
  /** How long a replaced release may take to answer the requests it already has. */
  RUNTIME_DRAIN_TIMEOUT: durationEnv('10s'),
  /**
   * The deployments service's deadline for the supervisor's answer to a call that waits for no
   * app (a ping, a log read); one that does (a start, a stop) gets what it waits for on top. A
   * supervisor that hangs fails the call, and the watchdog starts a new one.
   */
  RUNTIME_CONTROL_TIMEOUT: durationEnv('10s', { min: '100ms' }),
});

/**
 * The supervisor's environment (supervisor-main.ts). It holds no platform secret: the deployments
 * service starts it with these variables, PATH and HOME only.
 */
export const supervisorConfigSchema = z
  .object({
    NODE_ENV: baseEnv.shape.NODE_ENV,
    LOG_LEVEL: baseEnv.shape.LOG_LEVEL,
  })
  .merge(runtimeEnv)
  .merge(sandboxEnv)
  .transform((env) => ({ ...env, PORT: env.RUNTIME_ROUTER_PORT, HOST: env.RUNTIME_ROUTER_HOST }));

/**
 * The environment a supervisor is started with, from a parsed config holding the same settings
 * (the deployments service's): each value written back the way the schema reads it.
 */
export function supervisorEnvOf(
  config: Omit<z.infer<typeof supervisorConfigSchema>, 'PORT' | 'HOST'>,
): Record<string, string> {
  const env: Record<string, string> = {};
  const durations = new Set([
    'RUNTIME_RESTART_BACKOFF',
    'RUNTIME_RESTART_BACKOFF_MAX',
    'RUNTIME_RESTART_WINDOW',
    'RUNTIME_STOP_GRACE',
    'RUNTIME_DRAIN_TIMEOUT',
    'RUNTIME_CONTROL_TIMEOUT',
    'RUNTIME_RELEASE_RETENTION',
  ]);
  const keys = [
    'NODE_ENV',
    'LOG_LEVEL',
    ...Object.keys(runtimeEnv.shape),
    ...Object.keys(sandboxEnv.shape),
  ] as (keyof typeof config)[];
  for (const key of keys) {
    const value = config[key];
    env[key] = durations.has(key) ? `${String(value)}ms` : String(value);
  }
  return env;
}

export type SupervisorConfig = z.infer<typeof supervisorConfigSchema>;

/** The control API's unix socket in a runtime directory. */
export const controlSocketOf = (runtimeDir: string) => path.join(runtimeDir, 'supervisor.sock');
