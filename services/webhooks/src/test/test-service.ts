import type { Producer } from 'kafkajs';
import {
  Lifecycle,
  TOPICS,
  connectMongo,
  createKafka,
  createProducer,
  ensureTopics,
  newEvent,
  parseConfig,
  type DeploymentStatusChangedEvent,
  type PlatformEvent,
  type ProjectDeletedEvent,
} from '@platform/shared';
import {
  requestJson,
  startTestServer,
  testEnv,
  testInfraUrls,
  testLogger,
  uniqueName,
  waitFor,
} from '@platform/shared/testing';
import { createHash, randomBytes } from 'node:crypto';
import { compose, type Composed } from '../compose';
import { configSchema } from '../config';
import type { ResolveHost } from '../egress/egress-guard';
import { startProjectsStub, type ProjectsStub } from './projects-stub';
import { startReceiver, type Receiver } from './receiver';

export interface TestServiceOptions {
  dbName: string;
  projectsUrl: string;
  /** Receivers live on 127.0.0.1, so private delivery is on unless a test is about refusing it. */
  allowPrivate?: boolean;
  retrySchedule?: number[];
  timeoutMs?: number;
  concurrency?: number;
  disableAfterMs?: number;
  retentionMs?: number;
  housekeepingIntervalMs?: number;
  inOrderWindowMs?: number;
  resolveHost?: ResolveHost;
  /** Run the delivery worker (default true). */
  worker?: boolean;
  /** ENCRYPTION_KEY (default TEST_ENCRYPTION_KEY) and ENCRYPTION_PREVIOUS_KEYS. */
  encryptionKey?: string;
  previousEncryptionKeys?: string[];
  /** WEBHOOK_SECRET_OVERLAP. */
  secretOverlapMs?: number;
}

/** A key as ENCRYPTION_KEY reads it: `<keyId>:<base64 of 32 bytes>`, the bytes all `fill`. */
export const testEncryptionKey = (keyId: string, fill: number) =>
  `${keyId}:${Buffer.alloc(32, fill).toString('base64')}`;

export const TEST_ENCRYPTION_KEY = testEncryptionKey('test', 7);

const TEST_RETRY_SCHEDULE = [200, 200, 400];

const inMs = (value: number | undefined) => (value === undefined ? undefined : `${value}ms`);

/** The environment main.ts would read for these options; unset ones keep their defaults. */
function testServiceEnv(options: TestServiceOptions): NodeJS.ProcessEnv {
  return {
    ...testEnv(),
    MONGO_DB: options.dbName,
    PROJECTS_URL: options.projectsUrl,
    // The stub answers the deployments service's internal endpoint too.
    DEPLOYMENTS_URL: options.projectsUrl,
    // A group of its own that starts at the end: from the beginning it would replay every event
    // other suites ever published. The consumer is ready only after its first fetch, so nothing
    // published later is missed.
    KAFKA_GROUP_ID: uniqueName('webhooks-test'),
    KAFKA_FROM_BEGINNING: 'false',
    WEBHOOK_ALLOW_PRIVATE: String(options.allowPrivate ?? true),
    WEBHOOK_RETRY_SCHEDULE: (options.retrySchedule ?? TEST_RETRY_SCHEDULE).map(inMs).join(','),
    WEBHOOK_TIMEOUT_MS: String(options.timeoutMs ?? 3_000),
    WEBHOOK_DISABLE_AFTER: inMs(options.disableAfterMs),
    WEBHOOK_DELIVERY_RETENTION: inMs(options.retentionMs),
    DELIVERY_CONCURRENCY: options.concurrency?.toString(),
    DELIVERY_WORKER: String(options.worker ?? true),
    DELIVERY_POLL_INTERVAL: '100ms',
    DELIVERY_IN_ORDER_WINDOW: inMs(options.inOrderWindowMs),
    DELIVERY_STOP_GRACE: '300ms',
    DELIVERY_HOUSEKEEPING_INTERVAL: inMs(options.housekeepingIntervalMs),
    ENCRYPTION_KEY: options.encryptionKey ?? TEST_ENCRYPTION_KEY,
    ENCRYPTION_PREVIOUS_KEYS: options.previousEncryptionKeys?.join(','),
    WEBHOOK_SECRET_OVERLAP: inMs(options.secretOverlapMs),
  };
}

/** One instance of the service, composed as main.ts composes it, in the test process. */
export type TestService = Composed & {
  url: string;
  /** Closes HTTP, consumer, housekeeping, worker and connection, like SIGTERM; not the database. */
  stop(): Promise<void>;
};

export async function startTestService(options: TestServiceOptions): Promise<TestService> {
  const logger = testLogger('webhooks');
  const lifecycle = new Lifecycle(logger);
  const config = parseConfig(configSchema, testServiceEnv(options));
  try {
    const seams = { resolveHost: options.resolveHost };
    const composed = await compose(config, { logger, lifecycle }, seams);
    const server = await startTestServer(composed.app);
    lifecycle.onShutdown('http server', () => server.close());
    return { ...composed, url: server.url, stop: () => lifecycle.shutdown('test over') };
  } catch (err) {
    await lifecycle.shutdown('start-up failed');
    throw err;
  }
}

/** Drops a test file's database at the end. */
export async function dropDatabase(dbName: string): Promise<void> {
  const { mongoUrl } = testInfraUrls();
  const connection = await connectMongo({ url: mongoUrl, dbName, logger: testLogger() });
  await connection.dropDatabase();
  await connection.close();
}

/**
 * What a test file starts around the service, before its tests, and closes after them: the
 * projects stub, and every instance, receiver and database its tests start through this.
 */
export function useTestBed() {
  let stub: ProjectsStub | undefined;
  const services: TestService[] = [];
  const receivers: Receiver[] = [];
  const databases: string[] = [];
  const bed = {
    get projects(): ProjectsStub {
      if (!stub) throw new Error('useTestBed: read it inside a test or hook, after beforeAll');
      return stub;
    },
    /** A database of its own, dropped after the file. */
    newDatabase(prefix = 'webhooks_test'): string {
      const dbName = uniqueName(prefix);
      databases.push(dbName);
      return dbName;
    },
    async start(options: Partial<TestServiceOptions> & { dbName: string }) {
      const service = await startTestService({ projectsUrl: bed.projects.url, ...options });
      services.push(service);
      return service;
    },
    async stop(service: TestService) {
      services.splice(services.indexOf(service), 1);
      await service.stop();
    },
    async stopAll() {
      await Promise.all(services.splice(0).map((service) => service.stop()));
    },
    async receiver(...args: Parameters<typeof startReceiver>) {
      const receiver = await startReceiver(...args);
      receivers.push(receiver);
      return receiver;
    },
    /** A project of its own, owned by a new account, on `service`. */
    project: (service: { url: string }) => buildProject(service.url, bed.projects),
  };
  beforeAll(async () => {
    stub = await startProjectsStub();
  });
  afterAll(async () => {
    await bed.stopAll();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await stub?.close();
    await Promise.all(databases.map(dropDatabase));
  });
  return bed;
}

/** Calls the service's API as `accountId`, the way the gateway forwards a request. */
export function apiClient(baseUrl: string, accountId: string) {
  const call = (method: string, path: string, body?: unknown) =>
    requestJson(`${baseUrl}${path}`, {
      method,
      identity: { accountId, audience: 'webhooks' },
      body,
    });
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}

export const newId = () => randomBytes(12).toString('hex');

/**
 * A project of its own for one test: `{ accountId, projectId, api, base }`, registered with the
 * stub, whose deployments' status changes (buildStatusChange) the stub then confirms.
 */
export function buildProject(
  serviceUrl: string,
  stub: Pick<ProjectsStub, 'addProject' | 'recordDeployment'>,
) {
  const accountId = uniqueName('acct');
  const projectId = newId();
  stub.addProject(projectId, accountId);
  return {
    accountId,
    projectId,
    api: apiClient(serviceUrl, accountId),
    base: `/api/projects/${projectId}/webhooks`,
    recordDeployment: stub.recordDeployment,
  };
}

export type TestProject = ReturnType<typeof buildProject>;

/** Registers a webhook of `p` for `url` through the API; its id and secret. */
export async function subscribe(p: TestProject, url: string) {
  const res = await p.api.post(p.base, { url });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

/**
 * A delivery of `event` to `p`'s webhook written straight to the database, due now, as another
 * replica (or a worker that died) leaves it behind; `fields` add to it or change it.
 */
export function storeDelivery(
  service: TestService,
  p: { webhookId: string; projectId: string; accountId?: string },
  event: { eventId: string; type: string },
  fields: Record<string, unknown> = {},
) {
  return service.models.deliveries.create({
    webhookId: p.webhookId,
    projectId: p.projectId,
    accountId: p.accountId,
    eventId: event.eventId,
    type: event.type,
    body: '{"type":"deployment.status_changed"}',
    nextAttemptAt: new Date(),
    ...fields,
  });
}

/** Waits until the one delivery matching `filter` is in `status`, and returns it. */
export function settledDelivery(
  service: TestService,
  filter: { eventId?: string; webhookId?: string; _id?: string },
  status: string,
) {
  return waitFor(
    async () => {
      const delivery = await service.models.deliveries.findOne(filter).lean();
      return delivery?.status === status ? delivery : null;
    },
    { what: `delivery ${JSON.stringify(filter)} ${status}` },
  );
}

/**
 * A status change of a deployment of project `p`, as the deployments service publishes it; for a
 * project of the test bed, also what the deployments service then records of the deployment (so
 * the service's check of the event against it passes, as for a real one).
 */
export function buildStatusChange(
  p: {
    accountId: string;
    projectId: string;
    recordDeployment?: (event: DeploymentStatusChangedEvent) => void;
  },
  overrides: Partial<Omit<DeploymentStatusChangedEvent, 'eventId' | 'occurredAt' | 'type'>> = {},
): DeploymentStatusChangedEvent {
  const deploymentId = overrides.deploymentId ?? newId();
  const event = newEvent<DeploymentStatusChangedEvent>({
    type: 'deployment.status_changed',
    accountId: p.accountId,
    projectId: p.projectId,
    // One deployment is of one service, whichever of its changes this is.
    serviceId: createHash('sha256').update(deploymentId).digest('hex').slice(0, 24),
    deploymentId,
    status: 'BUILDING',
    previousStatus: null,
    commitHash: 'a1b2c3d4e5f6',
    ...overrides,
  });
  p.recordDeployment?.(event);
  return event;
}

export function buildProjectDeleted(accountId: string, projectId: string): ProjectDeletedEvent {
  return newEvent<ProjectDeletedEvent>({ type: 'project.deleted', accountId, projectId });
}

/** Publishes events onto the real topics, keyed as the platform keys them. */
export async function startEventPublisher() {
  const kafka = createKafka({
    ...testInfraUrls().kafka,
    clientId: 'webhooks-test-publisher',
    logger: testLogger(),
  });
  await ensureTopics(kafka);
  const producer: Producer = createProducer(kafka);
  await producer.connect();
  return {
    async publish(...events: PlatformEvent[]) {
      for (const event of events) {
        const [topic, key] =
          event.type === 'deployment.status_changed'
            ? [TOPICS.deploymentStatusChanged, event.deploymentId]
            : event.type === 'project.deleted'
              ? [TOPICS.projectDeleted, event.projectId]
              : [TOPICS.serviceDeleted, event.serviceId];
        await producer.send({ topic, acks: -1, messages: [{ key, value: JSON.stringify(event) }] });
      }
    },
    stop: () => producer.disconnect(),
  };
}
