import type { z } from 'zod';
import {
  Lifecycle,
  connectMongo,
  parseConfig,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';
import {
  identityHeaders,
  requestJson,
  startTestServer,
  testEnv,
  testLogger,
  uniqueName,
  useRunning,
  waitFor,
} from '@platform/shared/testing';
import { compose, createPipelineWorker } from '../compose';
import { configSchema, type Config } from '../config';
import type { DeploymentDoc, DeploymentLogsDoc } from '../deployments/deployments.model';
import type { TriggerResponse } from '../deployments/deployments.schemas';
import { ACTIVE_STATUSES, type DeploymentStatus } from '../deployments/status';
import type { Models } from '../models';
import type { PipelineWorker } from '../pipeline/pipeline.worker';
import { startProjectsStub, type OwnedService } from './projects-stub';

/** Settings as the service reads them from its environment (a misspelt name does not compile). */
export type ServiceEnv = Partial<Record<keyof z.input<typeof configSchema>, string>>;

/** The pipeline of every test: real processes and timings, scaled down. */
const TEST_PIPELINE: ServiceEnv = {
  BUILD_COMMAND: 'echo "building $COMMIT_HASH"; sleep 0.2',
  DEPLOY_COMMAND: 'echo "deploying $DEPLOYMENT_ID"; sleep 0.2',
  STEP_TIMEOUT: '10s',
  STEP_KILL_GRACE: '1s',
  LOG_LIMIT_BYTES: '65536',
  PIPELINE_CONCURRENCY: '4',
  PIPELINE_LEASE: '2s',
  PIPELINE_HEARTBEAT: '100ms',
  PIPELINE_POLL_INTERVAL: '200ms',
  // As main.ts would read it from the environment.
  PATH: process.env.PATH,
};

export interface HarnessOptions {
  /**
   * Run the pipeline in this replica, with these settings over the test ones. Without it,
   * deployments stay BUILDING until a test moves them or starts a worker (newWorker).
   */
  pipeline?: ServiceEnv;
  /** Publish status events to Kafka (default: they stay in their outbox, where changes() reads them). */
  relay?: boolean;
}

/**
 * The deployments service composed as main.ts composes it (compose.ts), in the test process: its
 * own database, a projects stub, a consumer group of its own, the pipeline only when asked.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const projects = await startProjectsStub();
  const env: ServiceEnv = {
    ...testEnv(),
    ...TEST_PIPELINE,
    MONGO_DB: uniqueName('deployments_test'),
    PROJECTS_URL: projects.url,
    // A group of its own from now on: deletions published before it started are not its business.
    KAFKA_GROUP_ID: uniqueName('deployments-test'),
    KAFKA_FROM_BEGINNING: 'false',
    PIPELINE_ENABLED: String(options.pipeline !== undefined),
    ...options.pipeline,
  };
  const configWith = (overrides: ServiceEnv = {}): Config =>
    parseConfig(configSchema, { ...env, ...overrides });
  const config = configWith();
  const logger = testLogger('deployments');
  const lifecycle = new Lifecycle(logger);
  const holdEvents = !options.relay;
  let composed: Awaited<ReturnType<typeof compose>>;
  let url: string;
  try {
    composed = await compose(config, { logger, lifecycle }, { holdEvents });
    const server = await startTestServer(composed.app);
    lifecycle.onShutdown('http server', () => server.close());
    url = server.url;
  } catch (err) {
    await lifecycle.shutdown('start-up failed');
    await projects.close();
    throw err;
  }
  const { models } = composed;
  const api = deploymentsApi(url);

  return {
    ...composed,
    url,
    config,
    projects,
    api,
    /**
     * Another replica's pipeline worker on this database (or on `otherModels`, another
     * connection to it), made by compose's own createPipelineWorker from these settings over the
     * harness's; not started.
     */
    newWorker(overrides: ServiceEnv = {}, otherModels: Models = models): PipelineWorker {
      return createPipelineWorker(configWith(overrides), {
        models: otherModels,
        logger,
        outbox: composed.outbox,
      });
    },
    /** A deployment just triggered (BUILDING), of a service of its own; `body` over a new commit. */
    async newDeployment(body: Record<string, unknown> = {}) {
      const service = projects.addService();
      const res = await api.trigger(service, { commitHash: newCommitHash(), ...body });
      if (res.status !== 201) throw new Error(`the trigger answered ${res.status}`);
      const created = res.body as TriggerResponse;
      return { service, id: created.id, created };
    },
    /** Runs a worker of these settings until the deployment is in `status`: the deployment then. */
    async runWorkerUntil(
      settings: ServiceEnv,
      { service, id }: { service: OwnedService; id: string },
      status: DeploymentStatus,
    ) {
      let reached: Awaited<ReturnType<typeof this.waitForStatus>>;
      await this.withWorker(settings, async () => {
        reached = await this.waitForStatus(service, id, status);
      });
      return reached;
    },
    /** Runs `test` while a worker of these settings runs (newWorker), and stops it after. */
    async withWorker(overrides: ServiceEnv, test: (worker: PipelineWorker) => Promise<void>) {
      const worker = this.newWorker(overrides);
      worker.start();
      try {
        await test(worker);
      } finally {
        await worker.stop();
      }
    },
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
    /** Once its outbox is empty, the relay has sent every event of the deployment it will send. */
    async outboxDrained(id: string): Promise<void> {
      await waitFor(
        async () => {
          const doc = await this.document(id);
          return doc !== null && doc.outbox.length === 0 && !doc.outboxPending;
        },
        { what: `the outbox of ${id} to drain` },
      );
    },
    /**
     * The recorded status changes, as "from>to" ("->BUILDING" for the creation), in order: the
     * events in the outbox, so only without a relay (with one, read them from Kafka).
     */
    async changes(id: string): Promise<string[]> {
      if (!holdEvents) throw new Error('the relay takes events out of the outbox: read Kafka');
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
    /** The deployment as the API answers it, once `ready` says so of it. */
    async waitForDeployment(
      owned: OwnedService,
      id: string,
      what: string,
      ready: (body: { status: DeploymentStatus; logs: string }) => boolean,
      timeoutMs = 15_000,
    ) {
      return waitFor(
        async () => {
          const res = await api.get(owned, id);
          return res.status === 200 && ready(res.body) ? res.body : null;
        },
        { timeoutMs, what: `deployment ${id}: ${what}` },
      );
    },
    async waitForStatus(
      owned: OwnedService,
      id: string,
      status: DeploymentStatus,
      timeoutMs = 15_000,
    ) {
      return this.waitForDeployment(owned, id, status, (d) => d.status === status, timeoutMs);
    },
    /** The deployment once its logs contain `text`. */
    async waitForLogs(owned: OwnedService, id: string, text: string) {
      return this.waitForDeployment(owned, id, `"${text}" logged`, (d) => d.logs.includes(text));
    },
    /** Stops everything compose opened (as SIGTERM would), the stub, and drops the database. */
    async close() {
      await lifecycle.shutdown('test over');
      await projects.close();
      const connection = await connectMongo({
        url: config.MONGO_URL,
        dbName: config.MONGO_DB,
        logger,
      });
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * A harness started before the tests of the file (or of the enclosing describe block) and closed
 * after them, read as `h.api`, `h.document(id)`, ... inside tests and hooks, once beforeAll has
 * run (hooks registered after this one may use it).
 */
export function useHarness(options: HarnessOptions = {}): Harness {
  const running = useRunning(() => startHarness(options));
  return new Proxy({} as Harness, { get: (_target, key) => Reflect.get(running(), key) });
}

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
