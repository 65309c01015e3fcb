import type { Kafka } from 'kafkajs';
import {
  OutboxRelay,
  type DeploymentStatusChangedEvent,
  type OutboxWriter,
  writeWithoutRelay,
  connectMongo,
  createInternalClient,
  createKafka,
  createProducer,
  ensureTopics,
  syncIndexes,
} from '@platform/shared';
import {
  identityHeaders,
  requestJson,
  startTestServer,
  testInfraUrls,
  testLogger,
  uniqueName,
  waitFor,
  TEST_INTERNAL_SECRET,
} from '@platform/shared/testing';
import { createApp, createDeploymentsService } from '../app';
import {
  allModels,
  deploymentModels,
  type DeploymentDoc,
  type DeploymentLogsDoc,
} from '../deployments/deployments.model';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { ACTIVE_STATUSES, type DeploymentStatus } from '../deployments/status';
import { PipelineWorker, type PipelineWorkerOptions } from '../pipeline/pipeline.worker';
import { startProjectsStub, type OwnedService } from './projects-stub';

export type PipelineOverrides = Partial<Omit<PipelineWorkerOptions, 'models' | 'outbox'>>;

export interface HarnessOptions {
  /** Run a pipeline worker in the test process (false: deployments stay BUILDING). */
  pipeline?: PipelineOverrides | false;
  /** Publish the outbox to Kafka. */
  relay?: boolean;
}

/** Fast defaults: real processes and timings, scaled down. */
export const testPipelineOptions = (): Omit<
  PipelineWorkerOptions,
  'models' | 'logger' | 'outbox'
> => ({
  buildCommand: 'echo "building $COMMIT_HASH"; sleep 0.2',
  deployCommand: 'echo "deploying $DEPLOYMENT_ID"; sleep 0.2',
  commandEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stepTimeoutMs: 10_000,
  logLimitBytes: 64 * 1024,
  concurrency: 4,
  leaseMs: 2_000,
  heartbeatMs: 100,
  pollIntervalMs: 200,
  killGraceMs: 1_000,
});

/**
 * The deployments service as main.ts wires it, in the test process: its own database, a
 * projects stub, optionally the outbox relay to the real Kafka and a pipeline worker.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const logger = testLogger('deployments');
  const { mongoUrl, kafkaBrokers } = testInfraUrls();
  const connection = await connectMongo({
    url: mongoUrl,
    dbName: uniqueName('deployments_test'),
    logger,
  });
  const models = deploymentModels(connection);
  await syncIndexes(allModels(models));
  const projects = await startProjectsStub();
  const kafka: Kafka = createKafka({
    brokers: kafkaBrokers,
    clientId: uniqueName('deployments-test'),
    logger,
  });

  let relay: OutboxRelay | undefined;
  if (options.relay) {
    await ensureTopics(kafka);
    relay = new OutboxRelay({
      producer: createProducer(kafka),
      models: [models.deployments],
      logger,
    });
    relay.start();
  }
  // Without a relay, events stay in their deployment's outbox (tests read them there).
  const outbox: OutboxWriter = relay ?? writeWithoutRelay;

  const newWorker = (overrides: PipelineOverrides = {}) =>
    new PipelineWorker({
      models,
      logger,
      outbox,
      ...testPipelineOptions(),
      ...overrides,
    });
  const worker = options.pipeline ? newWorker(options.pipeline) : undefined;
  worker?.start();

  const deps = {
    logger,
    internalSecret: TEST_INTERNAL_SECRET,
    connection,
    projects: createInternalClient({ baseUrl: projects.url, internalSecret: TEST_INTERNAL_SECRET }),
    outbox,
    onDeploymentCreated: () => worker?.wake(),
  };
  const service = createDeploymentsService(deps);
  const server = await startTestServer(createApp(deps, service));
  const api = deploymentsApi(server.url);

  return {
    url: server.url,
    connection,
    models,
    projects,
    kafka,
    relay,
    worker,
    service,
    api,
    newWorker,
    /** The repository as the service and pipeline use it (status changes reach the relay). */
    repository: new DeploymentsRepository(models, outbox),
    /** The stored document, as the API and the pipeline left it. */
    async document(id: string): Promise<DeploymentDoc | null> {
      return models.deployments.findById(id).lean<DeploymentDoc>();
    },
    /** The stored logs ('' when there are none). */
    async logs(id: string): Promise<string> {
      return (await models.logs.findById(id).lean<DeploymentLogsDoc>())?.logs ?? '';
    },
    /** The status events still in the deployment's outbox, in the order they were recorded. */
    async pendingEvents(id: string): Promise<DeploymentStatusChangedEvent[]> {
      const doc = await models.deployments.findById(id, { outbox: 1 }).lean<DeploymentDoc>();
      return (doc?.outbox ?? []).map((e) => e.payload as DeploymentStatusChangedEvent);
    },
    /**
     * The recorded status changes, as "from>to" ("->BUILDING" for the creation), in order: the
     * events in the outbox, so only without a relay (with one, read them from Kafka).
     */
    async changes(id: string): Promise<string[]> {
      if (relay) throw new Error('with a relay the events leave the outbox: read them from Kafka');
      const events = await this.pendingEvents(id);
      return events.map((e) => `${e.previousStatus ?? '-'}>${e.status}`);
    },
    /** The pipeline's hold on the deployment: claims made, claims given back, current holder. */
    async lease(id: string) {
      const doc = await models.deployments
        .findById(id, { attempts: 1, handedBack: 1, leaseOwner: 1 })
        .lean<DeploymentDoc>();
      if (!doc) throw new Error(`deployment ${id} does not exist`);
      return { attempts: doc.attempts, handedBack: doc.handedBack, leaseOwner: doc.leaseOwner };
    },
    /** The deployment's lease once nobody holds it. */
    async released(id: string) {
      return waitFor(
        async () => {
          const lease = await this.lease(id);
          return lease.leaseOwner === null ? lease : null;
        },
        { what: `deployment ${id} to be released` },
      );
    },
    /**
     * Whether a worker looking for work now could claim it: still to run, and nobody holds it
     * (never claimed, handed back, or its holder's lease ran out).
     */
    async isClaimable(id: string): Promise<boolean> {
      const found = await models.deployments.exists({
        _id: id,
        status: { $in: [...ACTIVE_STATUSES] },
        leaseUntil: { $lte: new Date() },
      });
      return found !== null;
    },
    async waitForStatus(
      owned: OwnedService,
      id: string,
      status: DeploymentStatus,
      timeoutMs = 15_000,
    ) {
      return waitFor(
        async () => {
          const res = await api.get(owned, id);
          return res.body?.status === status ? res.body : null;
        },
        { timeoutMs, what: `deployment ${id} to be ${status}` },
      );
    },
    async close() {
      await worker?.stop();
      await server.close();
      await relay?.stop();
      await projects.close();
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** The deployments endpoints, called as the service's owner unless headers say otherwise. */
export function deploymentsApi(baseUrl: string) {
  const path = (s: OwnedService, suffix = '') =>
    `${baseUrl}/api/projects/${s.projectId}/services/${s.serviceId}/deployments${suffix}`;
  const as = (s: OwnedService, headers: Record<string, string> = {}) => ({
    ...identityHeaders(s.accountId),
    ...headers,
  });
  return {
    path,
    trigger: (s: OwnedService, body: unknown, headers?: Record<string, string>) =>
      requestJson(path(s), { method: 'POST', headers: as(s, headers), body }),
    list: (s: OwnedService, query = '', headers?: Record<string, string>) =>
      requestJson(path(s, query ? `?${query}` : ''), { headers: as(s, headers) }),
    get: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}`), { headers: as(s, headers) }),
    cancel: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}/cancel`), { method: 'POST', headers: as(s, headers) }),
  };
}

let commitCounter = 0;

/** A commit hash no other test uses. */
export function newCommitHash(): string {
  commitCounter++;
  return `${Date.now().toString(16)}${commitCounter.toString(16).padStart(4, '0')}${Math.random().toString(16).slice(2, 10)}`;
}
