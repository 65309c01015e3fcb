import { createServer } from 'node:http';
import {
  Lifecycle,
  OutboxRelay,
  closeHttpServer,
  connectMongo,
  createInternalClient,
  createKafka,
  createLogger,
  createProducer,
  ensureTopics,
  loadConfig,
  syncIndexes,
} from '@platform/shared';
import { createApp, createDeploymentsService } from './app';
import { configSchema } from './config';
import { startCleanupConsumer } from './deployments/deployments.consumers';
import { allModels, deploymentModels } from './deployments/deployments.model';
import { IdempotencyRepository } from './deployments/idempotency.repository';
import { startHousekeeping } from './housekeeping';
import { PipelineWorker } from './pipeline/pipeline.worker';

const HOUR_MS = 60 * 60 * 1000;
/** A step gets this long to stop on SIGTERM before SIGKILL, at cancel and at shutdown. */
const KILL_GRACE_MS = 5_000;

async function main() {
  const config = loadConfig(configSchema);
  const logger = createLogger('deployments', config.LOG_LEVEL);
  // Room for the HTTP drain and a step's SIGTERM grace before the hard exit.
  const lifecycle = new Lifecycle(logger, 25_000);

  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const models = deploymentModels(connection);
  await syncIndexes(allModels(models));

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'deployments', logger });
  await ensureTopics(kafka);
  // Status events wait in their deployment's outbox (see deployments.model.ts).
  const relay = new OutboxRelay({
    producer: createProducer(kafka),
    models: [models.deployments],
    logger,
  });
  relay.start();
  lifecycle.onShutdown('outbox relay', () => relay.stop());

  const worker = config.PIPELINE_ENABLED
    ? new PipelineWorker({
        models,
        logger,
        buildCommand: config.BUILD_COMMAND,
        deployCommand: config.DEPLOY_COMMAND,
        commandEnv: { PATH: config.PATH, ...(config.HOME ? { HOME: config.HOME } : {}) },
        stepTimeoutMs: config.STEP_TIMEOUT_SECONDS * 1000,
        logLimitBytes: config.LOG_LIMIT_BYTES,
        concurrency: config.PIPELINE_CONCURRENCY,
        leaseMs: config.PIPELINE_LEASE_SECONDS * 1000,
        killGraceMs: KILL_GRACE_MS,
        outbox: relay,
      })
    : undefined;

  const deps = {
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    projects: createInternalClient({
      baseUrl: config.PROJECTS_URL,
      internalSecret: config.INTERNAL_SECRET,
    }),
    outbox: relay,
    onDeploymentCreated: () => worker?.wake(),
  };
  const service = createDeploymentsService(deps);

  const consumer = await startCleanupConsumer({
    kafka,
    connection,
    groupId: config.KAFKA_GROUP_ID,
    fromBeginning: config.KAFKA_FROM_BEGINNING,
    logger,
    service,
  });
  lifecycle.onShutdown('cleanup consumer', () => consumer.stop());

  const idempotencyKeys = new IdempotencyRepository(models.idempotencyKeys);
  const stopHousekeeping = startHousekeeping(
    {
      'expired idempotency keys': () => idempotencyKeys.pruneExpired(),
    },
    HOUR_MS,
    logger,
  );
  lifecycle.onShutdown('housekeeping', stopHousekeeping);

  if (worker) {
    worker.start();
    lifecycle.onShutdown('pipeline', () => worker.stop());
  }

  const server = createServer(createApp(deps, service));
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  lifecycle.onShutdown('http server', () => closeHttpServer(server));
  lifecycle.handleSignals();
  logger.info(
    { port: config.PORT, pipeline: config.PIPELINE_ENABLED },
    'deployments service listening',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`deployments: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
