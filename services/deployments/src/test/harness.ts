import type { z } from 'zod';
import {
  Lifecycle,
  connectMongo,
  parseConfig,
  type DeploymentStatusChangedEvent,
  unmountUnder,
} from '@platform/shared';
import {
  requestJson,
  startTestServer,
  testEnv,
  testLogger,
  uniqueName,
  useRunning,
  waitFor,
  type TestIdentity,
} from '@platform/shared/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAppRepository, FIXTURE_APP, freePort } from '@platform/shared/testing';
import { compose, createPipelineWorker } from '../compose';
import { openLocalSteps } from '../local.compose';
import { DeploymentsRepository } from '../deployments/deployments.repository';
import { RuntimeClient } from '../runtime/local/client';
import { routerGet, stopSupervisor } from '../runtime/local/testing';
import { SourceSnapshots } from '../source/snapshot';
import { ShellSteps } from './shell-steps';
import { configSchema, type Config } from '../config';
import { kubeConfigFrom, openKubernetesSteps } from '../kubernetes.compose';
import type { DeploymentDoc } from '../deployments/deployments.model';
import type { TriggerResponse } from '../deployments/deployments.schemas';
import { ACTIVE_STATUSES, isFinal, type DeploymentStatus } from '../deployments/status';
import type { Models } from '../models';
import type { PipelineWorker } from '../pipeline/pipeline.worker';
import {
  NO_SOURCE,
  TEST_ENCRYPTION_KEY,
  buildService,
  startProjectsStub,
  type OwnedService,
  type StubSource,
} from './projects-stub';

/** Settings as the service reads them from its environment (a misspelt name does not compile). */
export type ServiceEnv = Partial<Record<keyof z.input<typeof configSchema>, string>>;

/**
 * A test worker's settings; with TEST_BUILD or TEST_DEPLOY it runs ShellSteps (those shell
 * commands, `true` for the other) instead of the real steps: the worker's own mechanics tested
 * with steps whose timing and output the test controls.
 */
export type WorkerSettings = ServiceEnv & { TEST_BUILD?: string; TEST_DEPLOY?: string };

/** The pipeline of every test: real git, sandbox, runtime and timings, scaled down. */
const TEST_PIPELINE: ServiceEnv = {
  ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  // The fixture repositories are file:// URLs.
  SOURCE_ALLOW_LOCAL: 'true',
  HEALTH_CHECK_TIMEOUT: '5s',
  RUNTIME_RESTART_BACKOFF: '100ms',
  RUNTIME_STOP_GRACE: '2s',
  RUNTIME_LOG_POLL_INTERVAL: '100ms',
  STEP_TIMEOUT: '20s',
  STEP_KILL_GRACE: '1s',
  LOG_LIMIT_BYTES: '65536',
  PIPELINE_CONCURRENCY: '4',
  PIPELINE_LEASE: '2s',
  PIPELINE_HEARTBEAT: '100ms',
  PIPELINE_POLL_INTERVAL: '200ms',
  // As main.ts would read it from the environment (the supervisor starts with it).
  PATH: process.env.PATH,
  // What counts as public on this machine's network (scripts/infra/registry-egress.sh).
  SANDBOX_EGRESS_ALLOW: process.env.SANDBOX_EGRESS_ALLOW,
  // The same, for tenants' pods on Kubernetes (RUNTIME=kubernetes).
  KUBE_EGRESS_ALLOW: process.env.SANDBOX_EGRESS_ALLOW,
};

export interface HarnessOptions {
  /**
   * Run the pipeline in this replica, with these settings over the test ones (TEST_BUILD or
   * TEST_DEPLOY: ShellSteps). Without it, deployments stay BUILDING until a test moves them or
   * starts a worker (newWorker).
   */
  pipeline?: WorkerSettings;
  /** Publish status events to Kafka (default: they stay in their outbox, where changes() reads them). */
  relay?: boolean;
}

/**
 * The deployments service composed as main.ts composes it (compose.ts), in the test process: its
 * own database, a projects stub, a consumer group of its own, the pipeline only when asked.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const projects = await startProjectsStub();
  // The fixture app in a git repository, its first commit what a deployment builds by default.
  const appRepository = await createAppRepository();
  const firstCommit = await appRepository.commit({ greeting: 'hello' });
  const appSource: StubSource = {
    ...NO_SOURCE,
    repository: appRepository.url,
    branch: appRepository.branch,
    ...FIXTURE_APP,
  };
  const scratch = await mkdtemp(path.join(tmpdir(), 'deployments-harness-'));
  const { TEST_BUILD, TEST_DEPLOY, ...pipelineSettings } = options.pipeline ?? {};
  const env: ServiceEnv = {
    ...testEnv(),
    ...TEST_PIPELINE,
    RUNTIME_DIR: path.join(scratch, 'runtime'),
    RUNTIME_ROUTER_PORT: String(await freePort()),
    BUILDS_DIR: path.join(scratch, 'builds'),
    MONGO_DB: uniqueName('deployments_test'),
    PROJECTS_URL: projects.url,
    // A group of its own from now on: deletions published before it started are not its business.
    KAFKA_GROUP_ID: uniqueName('deployments-test'),
    KAFKA_FROM_BEGINNING: 'false',
    PIPELINE_ENABLED: String(options.pipeline !== undefined),
    ...pipelineSettings,
  };
  const configWith = (overrides: ServiceEnv = {}): Config =>
    parseConfig(configSchema, { ...env, ...overrides });
  const config = configWith();
  const logger = testLogger('deployments');
  const lifecycle = new Lifecycle(logger);
  const holdEvents = !options.relay;
  const shellSteps = (settings: Config, build?: string, deploy?: string) =>
    build !== undefined || deploy !== undefined
      ? new ShellSteps({
          build,
          deploy,
          timeoutMs: settings.STEP_TIMEOUT,
          killGraceMs: settings.STEP_KILL_GRACE,
        })
      : undefined;
  /** Stops everything compose opened (as SIGTERM would), the stub, the supervisor, the builds. */
  const stopAll = async (reason: string) => {
    await lifecycle.shutdown(reason);
    await projects.close();
    await appRepository.close();
    // The supervisor outlives the service by design; a test's goes with its apps.
    await stopSupervisor(new RuntimeClient(config.RUNTIME_DIR));
    await unmountUnder(scratch);
    await rm(scratch, { recursive: true, force: true });
  };
  let composed: Awaited<ReturnType<typeof compose>>;
  let url: string;
  try {
    composed = await compose(
      config,
      { logger, lifecycle },
      { holdEvents, steps: shellSteps(config, TEST_BUILD, TEST_DEPLOY) },
    );
    const server = await startTestServer(composed.app);
    lifecycle.onShutdown('http server', () => server.close());
    url = server.url;
  } catch (err) {
    await stopAll('start-up failed');
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
    /** The fixture app's repository, and the commit deployments build unless told otherwise. */
    appRepository,
    firstCommit,
    /**
     * Another replica's pipeline worker on this database (or on `otherModels`, another
     * connection to it), made by compose’s own openLocalSteps (openKubernetesSteps with RUNTIME=kubernetes) and createPipelineWorker from
     * these settings over the harness's (the same runtime and builds); not started.
     */
    async newWorker(settings: WorkerSettings = {}, otherModels: Models = models) {
      const { TEST_BUILD: build, TEST_DEPLOY: deploy, ...overrides } = settings;
      const workerConfig = configWith(overrides);
      const parts = {
        snapshots: new SourceSnapshots(otherModels.sources),
        repository: new DeploymentsRepository(otherModels, composed.outbox),
      };
      const steps =
        shellSteps(workerConfig, build, deploy) ??
        (workerConfig.RUNTIME === 'kubernetes'
          ? (
              await openKubernetesSteps(
                workerConfig,
                { logger, lifecycle },
                { ...parts, kc: kubeConfigFrom(workerConfig) },
              )
            ).steps
          : undefined) ??
        (
          await openLocalSteps(
            workerConfig,
            { logger, lifecycle },
            { ...parts, builds: composed.builds },
          )
        ).steps;
      return createPipelineWorker(workerConfig, {
        models: otherModels,
        logger,
        outbox: composed.outbox,
        steps,
        logAppended: composed.notices.appended,
      });
    },
    /**
     * A deployment just triggered (BUILDING), of a service of its own whose source is the
     * fixture app with `source` over it; `body` over the fixture's first commit.
     */
    async newDeployment(body: Record<string, unknown> = {}, source: Partial<StubSource> = {}) {
      const service = projects.addService(buildService(), { ...appSource, ...source });
      const res = await api.trigger(service, { commitHash: firstCommit.hash, ...body });
      if (res.status !== 201) throw new Error(`the trigger answered ${res.status}`);
      const created = res.body as TriggerResponse;
      return { service, id: created.id, created };
    },
    /** `GET urlPath` of the service's URL, through the runtime's router. */
    app(service: OwnedService, urlPath = '/') {
      return routerGet(config.RUNTIME_ROUTER_PORT, service.serviceId, urlPath);
    },
    /** Runs a worker of these settings until the deployment is in `status`: the deployment then. */
    async runWorkerUntil(
      settings: WorkerSettings,
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
    async withWorker(overrides: WorkerSettings, test: (worker: PipelineWorker) => Promise<void>) {
      const worker = await this.newWorker(overrides);
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
      return composed.repository.logs.read(id);
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
      ).catch(async (err: Error) => {
        // Where it was instead, and the end of its log: what a failure report needs.
        const res = await api.get(owned, id).catch(() => null);
        const logs = String(res?.body?.logs ?? '')
          .split('\n')
          .slice(-30)
          .join('\n');
        throw new Error(
          `${err.message}; it is ${res?.body?.status ?? 'unknown'}, its log ends:\n${logs}`,
        );
      });
    },
    async waitForStatus(
      owned: OwnedService,
      id: string,
      status: DeploymentStatus,
      timeoutMs = 15_000,
    ) {
      // A final status other than the one awaited ends the wait at once: it can change no more.
      const found = await this.waitForDeployment(
        owned,
        id,
        status,
        (d) => d.status === status || isFinal(d.status),
        timeoutMs,
      );
      if (found.status !== status) {
        const logs = String(found.logs).split('\n').slice(-30).join('\n');
        throw new Error(
          `deployment ${id} is ${found.status}, never to be ${status}; its log ends:\n${logs}`,
        );
      }
      return found;
    },
    /** The deployment once its logs contain `text`. */
    async waitForLogs(owned: OwnedService, id: string, text: string, timeoutMs?: number) {
      return this.waitForDeployment(
        owned,
        id,
        `"${text}" logged`,
        (d) => d.logs.includes(text),
        timeoutMs,
      );
    },
    /** Stops everything compose opened (as SIGTERM would), the stub, and drops the database. */
    async close() {
      await stopAll('test over');
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
export function useHarness(
  options: HarnessOptions | (() => Promise<HarnessOptions>) = {},
): Harness {
  const running = useRunning(async () =>
    startHarness(typeof options === 'function' ? await options() : options),
  );
  return new Proxy({} as Harness, { get: (_target, key) => Reflect.get(running(), key) });
}

/** The deployments endpoints, called as the service's owner (with any extra headers). */
export function deploymentsApi(baseUrl: string) {
  const path = (s: OwnedService, suffix = '') =>
    `${baseUrl}/api/projects/${s.projectId}/services/${s.serviceId}/deployments${suffix}`;
  return {
    path,
    trigger: (s: OwnedService, body: unknown, headers?: Record<string, string>) =>
      requestJson(path(s), { method: 'POST', identity: asOwner(s), headers, body }),
    list: (s: OwnedService, query = '', headers?: Record<string, string>) =>
      requestJson(path(s, query ? `?${query}` : ''), { identity: asOwner(s), headers }),
    get: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}`), { identity: asOwner(s), headers }),
    cancel: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}/cancel`), { method: 'POST', identity: asOwner(s), headers }),
    redeploy: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}/redeploy`), { method: 'POST', identity: asOwner(s), headers }),
    rollback: (s: OwnedService, id: string, headers?: Record<string, string>) =>
      requestJson(path(s, `/${id}/rollback`), { method: 'POST', identity: asOwner(s), headers }),
  };
}

/** The identity of a service's owner, for a request to the deployments service. */
export const asOwner = (s: OwnedService): TestIdentity => ({
  accountId: s.accountId,
  audience: 'deployments',
});

let commitCounter = 0;

/** A commit hash no other test uses. */
export function newCommitHash(): string {
  commitCounter++;
  return `${Date.now().toString(16)}${commitCounter.toString(16).padStart(4, '0')}${Math.random().toString(16).slice(2, 10)}`;
}
