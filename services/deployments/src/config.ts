import path from 'node:path';
import { z } from 'zod';
import {
  booleanEnv,
  consumerEnv,
  durationEnv,
  encryptionEnv,
  localSourcesSetting,
  serviceEnv,
} from '@platform/shared';
import { runtimeEnv } from './runtime/local/supervisor.config';
import { kubernetesRunnerEnv } from './runtime/kubernetes/runner.env';
import { defaultBuildsDir } from './builds/build-store';
import { cpuLimitEnv, memoryLimitEnv, processLimitEnv, sandboxEnv } from './sandbox/sandbox.env';

const positiveInt = (defaultValue: number) =>
  z.coerce.number().int().positive().default(defaultValue);

export const configSchema = serviceEnv({ port: 4003, database: 'platform_deployments' })
  .merge(consumerEnv('deployments'))
  .merge(sandboxEnv)
  // Secret variables reach builds and apps: the pipeline opens what the projects service sealed.
  .merge(encryptionEnv)
  /**
   * The local runtime (src/runtime/local, README.md "Local runtime"): the supervisor this service
   * starts (or finds) in RUNTIME_DIR, with these settings; the gateway's RUNTIME_ROUTER_URL
   * points at RUNTIME_ROUTER_PORT. RUNTIME_DIR is a volume in a container, so a new container
   * finds the supervisor's logs.
   */
  .merge(runtimeEnv)
  /** RUNTIME=kubernetes: builds and apps in a cluster instead (docs/kubernetes-runner.md). */
  .merge(kubernetesRunnerEnv)
  .extend({
    /** Base URL of the projects service, asked about ownership before every request. */
    PROJECTS_URL: z.string().url(),
    /** A build command running longer than this is stopped and the deployment FAILED. */
    STEP_TIMEOUT: durationEnv('10m', { min: '1s' }),
    /** After SIGTERM (cancel, time limit, shutdown), how long a build gets before SIGKILL. */
    STEP_KILL_GRACE: durationEnv('5s'),
    /** CPU seconds a build command may use (RLIMIT_CPU of each of its processes). */
    BUILD_CPU_SECONDS: positiveInt(600),
    /** Memory of a build, all its processes together, swap and its /tmp included. */
    BUILD_MEMORY_BYTES: memoryLimitEnv(2 * 1024 ** 3),
    /** CPU of a build (1 = one core). */
    BUILD_CPUS: cpuLimitEnv(1),
    /** Processes and threads of one build at once. */
    BUILD_PROCESSES: processLimitEnv(512),
    /**
     * The size of a build's disk: a filesystem of its own holding its workspace and /tmp (sparse:
     * it takes what is written). 0: plain directories, no limit (refused in production).
     */
    BUILD_DISK_BYTES: z.coerce
      .number()
      .int()
      .refine((bytes) => bytes === 0 || bytes >= 64 * 1024 ** 2, 'must be 0 or at least 64 MiB')
      .default(4 * 1024 ** 3),
    /** Logs kept per deployment; the oldest output is trimmed beyond it. */
    LOG_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024, 'must be at least 1024')
      .default(256 * 1024),
    /** Deployments this process runs at the same time. */
    PIPELINE_CONCURRENCY: positiveInt(2),
    /**
     * The most builds (deployments BUILDING and held by a worker) one account has running at
     * once, across all replicas; its further deployments wait in turn (README.md "Fair share").
     */
    ACCOUNT_MAX_BUILDS: positiveInt(2),
    /**
     * The most apps one account has live: services with a DEPLOYED or DEPLOYING deployment, or
     * a build running (which reserves its service's place). A deployment of a service already
     * counted replaces its app and never waits for this; one of another service waits, before
     * its build, until a place frees (README.md "Fair share").
     */
    ACCOUNT_MAX_APPS: positiveInt(10),
    /** false: this replica serves the API only and runs no pipeline. */
    PIPELINE_ENABLED: booleanEnv(true),
    /** How long a worker's claim on a deployment lasts without a heartbeat. */
    PIPELINE_LEASE: durationEnv('30s', { min: '100ms' }),
    /**
     * How often a worker renews its claims and notices a cancel (the ~300 ms README.md
     * promises). Must be well under the lease. Output is written as it comes (LOG_FLUSH_DELAY).
     */
    PIPELINE_HEARTBEAT: durationEnv('300ms', { min: '10ms', max: '10s' }),
    /**
     * The longest a line a build or an app printed waits to share its write to the log with
     * others, beyond the write in flight (one at a time per deployment): the log is written as
     * output comes, and its followers are woken by each write (docs/architecture.md, "Live logs").
     */
    LOG_FLUSH_DELAY: durationEnv('5ms', { min: '1ms', max: '1s' }),
    /**
     * How long after its last read a followed log is read again when no notice of an append
     * came: the fallback should a notice be lost (the broker away), never the usual way.
     */
    LOG_FOLLOW_POLL: durationEnv('1s', { min: '10ms', max: '10m' }),
    /** A log stream (SSE) sends a comment line this often while nothing else happens. */
    LOG_STREAM_HEARTBEAT: durationEnv('15s', { min: '10ms', max: '5m' }),
    /** How often a starting app's output is copied into its deployment's log. */
    RUNTIME_LOG_POLL_INTERVAL: durationEnv('250ms', { min: '10ms', max: '10s' }),
    /** How often an idle worker looks for deployments (a trigger on its own replica wakes it). */
    PIPELINE_POLL_INTERVAL: durationEnv('1s', { min: '10ms', max: '1m' }),
    /** The PATH and HOME the runtime's supervisor starts with (never the apps: they get their own). */
    PATH: z.string().default('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'),
    HOME: z.string().optional(),
    /**
     * How long a started app has to answer `GET healthCheckPath` with 2xx or 3xx before the
     * deployment is FAILED (contracts.md names it HEALTH_CHECK_TIMEOUT_SECONDS, 60).
     */
    HEALTH_CHECK_TIMEOUT: durationEnv('60s', { min: '1s', max: '1h' }),
    /**
     * `true`: a service's repository may be `http://`, on a private or loopback host, or a
     * `file://` URL anywhere but the platform's own files (contracts.md; the local stack sets
     * it). An absolute directory: `file://` repositories under it only (real paths, checked at
     * fetch). `false` (default): only `https://` to public hosts. See README "Source and builds".
     */
    SOURCE_ALLOW_LOCAL: localSourcesSetting,
    /** With HOME: where `platform-dev` is, whose files no repository may be (SOURCE_ALLOW_LOCAL). */
    XDG_CACHE_HOME: z.string().min(1).optional(),
    /** The time limit of fetching a deployment's commit; past it the deployment is FAILED. */
    SOURCE_FETCH_TIMEOUT: durationEnv('2m', { min: '1s', max: '1h' }),
    /**
     * Where builds are kept (src/builds, README.md "Source and builds"): a directory per
     * deployment, the last 10 successful of each service. A volume in a container, shared by
     * the replicas that build and the runtime that starts them.
     */
    BUILDS_DIR: z
      .string()
      .refine((value) => path.isAbsolute(value), 'must be an absolute path')
      .default(defaultBuildsDir()),
  })
  .refine((config) => config.PIPELINE_HEARTBEAT < config.PIPELINE_LEASE, {
    path: ['PIPELINE_HEARTBEAT'],
    message: 'must be shorter than PIPELINE_LEASE',
  })
  .refine((config) => config.SANDBOX !== 'none' || config.ALLOW_UNSANDBOXED, {
    path: ['SANDBOX'],
    message: "'none' runs tenants' code without isolation: set ALLOW_UNSANDBOXED=true to allow it",
  })
  .refine((config) => config.BUILD_DISK_BYTES > 0 || config.NODE_ENV !== 'production', {
    path: ['BUILD_DISK_BYTES'],
    message:
      'a build without a disk of its own could fill the host: refused when NODE_ENV=production',
  })
  .refine((config) => config.SANDBOX !== 'none' || config.NODE_ENV !== 'production', {
    path: ['SANDBOX'],
    message: "'none' is refused when NODE_ENV=production",
  });

export type Config = z.infer<typeof configSchema>;
