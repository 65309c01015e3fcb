import {
  Scheduler,
  deletionConfirmer,
  requireOwnership,
  openDatabase,
  openKafka,
  startServiceConsumer,
  TOPICS,
  watchEvents,
  startOutboxRelay,
  writeWithoutRelay,
  type OutboxWriter,
  type Runtime,
} from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { CONSUMED_TOPICS, eventHandler } from './events/events.consumer';
import { AccountLimits, type AccountLimitSettings } from './deployments/account-limits';
import { DeploymentsRepository } from './deployments/deployments.repository';
import { DeploymentsService } from './deployments/deployments.service';
import { TriggerRepository } from './deployments/trigger.repository';
import { TriggerService } from './deployments/trigger.service';
import { StatusWatch } from './deployments/status-watch';
import { createModels } from './models';
import type { DeploymentDoc } from './deployments/deployments.model';
import { LogStore } from './deployments/log-store';
import { LogFollowers } from './deployments/log-followers';
import { LOG_APPENDED_TOPIC, LogNotices } from './deployments/log-notices';
import { BuildStore } from './builds/build-store';
import { BuildDisks } from './builds/build-disk';
import { LiveLogs } from './pipeline/live-logs';
import type { DeploymentSteps } from './pipeline/deployment-steps';
import { connectLocalRuntime } from './runtime/local/client';
import { SourceSnapshots } from './source/snapshot';
import { PipelineWorker, type PipelineWorkerOptions } from './pipeline/pipeline.worker';
import { restoreLiveApps } from './pipeline/restore-live-apps';
import { openLocalSteps } from './local.compose';
import {
  keptImages,
  kubeConfigFrom,
  openKubernetesSteps,
  startKubernetesRouter,
} from './kubernetes.compose';

const HOUR_MS = 60 * 60 * 1000;
/**
 * On Kubernetes, the shortest interval at which every deployed app's output is read (a call to
 * the cluster's API per app): locally it is RUNTIME_LOG_POLL_INTERVAL (a call to the supervisor).
 */
const CLUSTER_LIVE_LOG_POLL_MIN_MS = 1_000;
/** How often a pipeline replica checks that its local runtime's supervisor answers. */
const RUNTIME_CHECK_MS = 5_000;

/** What a test may change that no setting should. */
export interface Seams {
  /**
   * Leave the status events in their deployment's outbox (no outbox relay), so a test reads
   * exactly what was recorded, in order, with no Kafka in between. Not a setting: a replica whose
   * events never leave is broken, whatever an operator meant by it.
   */
  holdEvents?: boolean;
  /**
   * Run these steps instead of the real ones (LocalSteps): tests of the pipeline's own mechanics
   * give shell commands whose timing they control. Not a setting: the platform builds and runs
   * what the service's settings say, nothing else.
   */
  steps?: DeploymentSteps;
}

/**
 * The deployments service, opened and wired (main.ts through runService, and every test):
 * Mongo, Kafka, the outbox relay, the cleanup consumer, the housekeeping, the pipeline worker
 * (unless PIPELINE_ENABLED is false) and the HTTP app. Each closer is registered as it opens, so
 * at shutdown the worker hands its deployments back before the relay, consumer and Mongo go.
 */
export async function compose(config: Config, runtime: Runtime, seams: Seams = {}) {
  const { logger, lifecycle } = runtime;
  const { connection, models } = await openDatabase(config, runtime, createModels);

  const kafka = await openKafka(config, runtime, 'deployments');
  // Status events wait in their deployment's outbox (deployments.model.ts) for the relay.
  const outbox: OutboxWriter = seams.holdEvents
    ? writeWithoutRelay
    : startOutboxRelay(kafka, [models.deployments], runtime);

  const followers = new LogFollowers({
    logs: new LogStore(models, config.LOG_LIMIT_BYTES),
    statusOf: async (id) =>
      (await models.deployments.findById(id, { status: 1 }).lean<DeploymentDoc>())?.status ?? null,
    pollMs: config.LOG_FOLLOW_POLL,
    logger,
    stopping: lifecycle.stopping,
  });
  // Every append wakes the log's followers here at once, and in the other replicas through Kafka.
  const notices = new LogNotices({
    kafka,
    logger,
    wake: (id, lastLine, lines) => followers.appended(id, lastLine, lines),
  });
  await notices.start();
  lifecycle.onShutdown('log notices', () => notices.stop());
  const logAppended = notices.appended;
  const repository = new DeploymentsRepository(models, outbox, config.LOG_LIMIT_BYTES, logAppended);
  const snapshots = new SourceSnapshots(models.sources);
  const builds = new BuildStore(config.BUILDS_DIR, {
    disks: new BuildDisks(config.BUILD_DISK_BYTES),
  });
  const runsPipeline = config.PIPELINE_ENABLED && !seams.steps;
  const local =
    runsPipeline && config.RUNTIME === 'local'
      ? await openLocalSteps(config, runtime, { snapshots, builds, repository })
      : undefined;
  const kc = runsPipeline && config.RUNTIME === 'kubernetes' ? kubeConfigFrom(config) : undefined;
  const routes = kc && (await startKubernetesRouter(config, runtime, kc));
  const cluster =
    kc && (await openKubernetesSteps(config, runtime, { snapshots, repository, kc, routes }));
  const steps = seams.steps ?? local?.steps ?? cluster?.steps;
  const worker =
    config.PIPELINE_ENABLED && steps
      ? createPipelineWorker(config, { models, logger, outbox, steps, logAppended })
      : undefined;
  // Every replica sees every status event, to wake its own `?wait=` requests and log followers,
  // and every log notice, to wake its followers (the same consumer: one group per replica).
  const statusWatch = new StatusWatch();
  const watcher = await watchEvents({
    kafka,
    groupPrefix: `${config.KAFKA_GROUP_ID}-wait`,
    topics: [TOPICS.deploymentStatusChanged],
    logger,
    handle: (event) => {
      if (event.type === 'deployment.status_changed') {
        statusWatch.changed(event.deploymentId);
        followers.statusChanged(event.deploymentId, event.status);
      }
    },
    raw: { [LOG_APPENDED_TOPIC]: notices.received },
  });
  lifecycle.onShutdown('status watch', () => watcher.stop());
  const service = new DeploymentsService({
    followers,
    deployments: repository,
    statusWatch,
    snapshots,
    builds,
    runtime: local?.runtime ?? cluster?.runtime,
    limits: new AccountLimits(models, accountLimitsOf(config)),
  });
  const triggerRepository = new TriggerRepository(models, outbox, repository.logs, config);
  const triggers = new TriggerService({
    triggers: triggerRepository,
    deployments: repository,
    snapshots,
    builds: config.RUNTIME === 'kubernetes' ? keptImages(config) : builds,
    onDeploymentCreated: () => worker?.wake(),
  });

  await startServiceConsumer(config, runtime, {
    kafka,
    connection,
    topics: CONSUMED_TOPICS,
    handle: eventHandler(service, deletionConfirmer(config), logger),
  });

  const scheduler = new Scheduler(logger);
  scheduler.every({
    name: 'expired idempotency keys',
    everyMs: HOUR_MS,
    runAtStart: true,
    run: () => triggerRepository.pruneExpiredKeys(),
  });
  if (local) {
    const restore = () => restoreLiveApps(repository, models, local.steps, logger);
    // In the background: a restored app may take its health check's time to answer.
    void restore().catch((err: unknown) =>
      logger.warn({ err: (err as Error).message }, 'could not look for apps to restore'),
    );
    // A supervisor that went away (killed, crashed) is started again, and the live apps with it.
    scheduler.every({
      name: 'local runtime supervisor',
      everyMs: RUNTIME_CHECK_MS,
      run: async () => {
        if (await local.runtime.ping().catch(() => null)) return;
        logger.warn('the local runtime supervisor does not answer: starting it again');
        await connectLocalRuntime(local.connectOptions);
        await restore();
      },
    });
  }
  const apps = local ?? cluster;
  if (apps) {
    const liveLogs = new LiveLogs({
      models,
      runtime: apps.appLogs,
      snapshots,
      secretBox: apps.secretBox,
      logs: repository.logs,
      logger,
    });
    scheduler.every({
      name: 'deployed apps’ output',
      everyMs: cluster
        ? Math.max(config.RUNTIME_LOG_POLL_INTERVAL, CLUSTER_LIVE_LOG_POLL_MIN_MS)
        : config.RUNTIME_LOG_POLL_INTERVAL,
      run: () => liveLogs.poll(),
    });
  }
  lifecycle.onShutdown('housekeeping', () => scheduler.stop());

  if (worker) {
    worker.start();
    lifecycle.onShutdown('pipeline', () => worker.stop());
    logger.info({ workerId: worker.workerId }, 'pipeline worker started');
  }

  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    requireService: requireOwnership(config, 'service'),
    service,
    triggers,
    logStreamHeartbeatMs: config.LOG_STREAM_HEARTBEAT,
  });
  return {
    app,
    restoreLiveApps: () => local && restoreLiveApps(repository, models, local.steps, logger),
    connection,
    models,
    kafka,
    outbox,
    repository,
    worker,
    statusWatch,
    service,
    triggers,
    followers,
    notices,
    builds,
    runtime: local?.runtime,
  };
}

/** ACCOUNT_MAX_BUILDS and ACCOUNT_MAX_APPS, for the pipeline and for the API that says why one waits. */
const accountLimitsOf = (config: Config): AccountLimitSettings => ({
  maxBuilds: config.ACCOUNT_MAX_BUILDS,
  maxApps: config.ACCOUNT_MAX_APPS,
});

/**
 * A pipeline worker as the config describes it: the one compose starts, and in tests the
 * workers of other replicas (more than one worker on one database, one cut off mid-step).
 */
export function createPipelineWorker(
  config: Config,
  parts: Pick<PipelineWorkerOptions, 'models' | 'logger' | 'outbox' | 'steps' | 'logAppended'>,
): PipelineWorker {
  return new PipelineWorker({
    ...parts,
    logLimitBytes: config.LOG_LIMIT_BYTES,
    logLineMaxBytes: config.LOG_LINE_MAX_BYTES,
    logFlushDelayMs: config.LOG_FLUSH_DELAY,
    concurrency: config.PIPELINE_CONCURRENCY,
    leaseMs: config.PIPELINE_LEASE,
    heartbeatMs: config.PIPELINE_HEARTBEAT,
    pollIntervalMs: config.PIPELINE_POLL_INTERVAL,
    accountLimits: accountLimitsOf(config),
  });
}
