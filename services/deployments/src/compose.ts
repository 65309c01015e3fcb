import {
  Scheduler,
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
import { DeploymentsRepository } from './deployments/deployments.repository';
import { DeploymentsService } from './deployments/deployments.service';
import { StatusWatch } from './deployments/status-watch';
import { IdempotencyRepository } from './deployments/idempotency.repository';
import { createModels } from './models';
import { PipelineWorker, type PipelineWorkerOptions } from './pipeline/pipeline.worker';

const HOUR_MS = 60 * 60 * 1000;

/** What a test may change that no setting should. */
export interface Seams {
  /**
   * Leave the status events in their deployment's outbox (no outbox relay), so a test reads
   * exactly what was recorded, in order, with no Kafka in between. Not a setting: a replica whose
   * events never leave is broken, whatever an operator meant by it.
   */
  holdEvents?: boolean;
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

  const worker = config.PIPELINE_ENABLED
    ? createPipelineWorker(config, { models, logger, outbox })
    : undefined;
  const repository = new DeploymentsRepository(models, outbox);
  const idempotencyKeys = new IdempotencyRepository(models.idempotencyKeys);
  // Every replica sees every status event, to wake its own `?wait=` requests.
  const statusWatch = new StatusWatch();
  const watcher = await watchEvents({
    kafka,
    groupPrefix: `${config.KAFKA_GROUP_ID}-wait`,
    topics: [TOPICS.deploymentStatusChanged],
    logger,
    handle: (event) => {
      if (event.type === 'deployment.status_changed') statusWatch.changed(event.deploymentId);
    },
  });
  lifecycle.onShutdown('status watch', () => watcher.stop());
  const service = new DeploymentsService({
    deployments: repository,
    idempotencyKeys,
    onDeploymentCreated: () => worker?.wake(),
    statusWatch,
  });

  await startServiceConsumer(config, runtime, {
    kafka,
    connection,
    topics: CONSUMED_TOPICS,
    handle: eventHandler(service, logger),
  });

  const scheduler = new Scheduler(logger);
  scheduler.every({
    name: 'expired idempotency keys',
    everyMs: HOUR_MS,
    runAtStart: true,
    run: () => idempotencyKeys.pruneExpired(),
  });
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
  });
  return { app, connection, models, kafka, outbox, repository, worker, statusWatch };
}

/**
 * A pipeline worker as the config describes it: the one compose starts, and in tests the
 * workers of other replicas (more than one worker on one database, one cut off mid-step).
 */
export function createPipelineWorker(
  config: Config,
  parts: Pick<PipelineWorkerOptions, 'models' | 'logger' | 'outbox'>,
): PipelineWorker {
  return new PipelineWorker({
    ...parts,
    buildCommand: config.BUILD_COMMAND,
    deployCommand: config.DEPLOY_COMMAND,
    commandEnv: { PATH: config.PATH, ...(config.HOME ? { HOME: config.HOME } : {}) },
    stepTimeoutMs: config.STEP_TIMEOUT,
    killGraceMs: config.STEP_KILL_GRACE,
    logLimitBytes: config.LOG_LIMIT_BYTES,
    concurrency: config.PIPELINE_CONCURRENCY,
    leaseMs: config.PIPELINE_LEASE,
    heartbeatMs: config.PIPELINE_HEARTBEAT,
    pollIntervalMs: config.PIPELINE_POLL_INTERVAL,
  });
}
