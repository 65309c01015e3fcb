import type { Producer } from 'kafkajs';
import type { Connection } from 'mongoose';
import {
  TOPICS,
  connectMongo,
  createInternalClient,
  createKafka,
  createProducer,
  ensureTopics,
  newEvent,
  type DeploymentStatusChangedEvent,
  type EventConsumer,
  type PlatformEvent,
  type ProjectDeletedEvent,
} from '@platform/shared';
import {
  TEST_INTERNAL_SECRET,
  identityHeaders,
  requestJson,
  startTestServer,
  testInfraUrls,
  testLogger,
  uniqueName,
  type TestServer,
} from '@platform/shared/testing';
import { randomBytes } from 'node:crypto';
import { createApp } from '../app';
import { createComponents, syncAllIndexes, type Components } from '../components';
import type { ResolveHost } from '../egress/egress-guard';
import { startWebhookConsumer } from '../events/events.consumer';

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
  /** Consume events with this group id (default: no consumer). */
  groupId?: string;
}

export const TEST_RETRY_SCHEDULE = [200, 200, 400];

/** One instance of the service, wired as main.ts wires it, in the test process. */
export interface TestService {
  url: string;
  connection: Connection;
  components: Components;
  /** Stops HTTP, consumer and worker, like SIGTERM; the database stays. */
  stop(): Promise<void>;
}

export async function startTestService(options: TestServiceOptions): Promise<TestService> {
  const logger = testLogger('webhooks');
  const { mongoUrl, kafkaBrokers } = testInfraUrls();
  const connection = await connectMongo({ url: mongoUrl, dbName: options.dbName, logger });
  const components = createComponents({
    connection,
    logger,
    allowPrivate: options.allowPrivate ?? true,
    retrySchedule: options.retrySchedule ?? TEST_RETRY_SCHEDULE,
    timeoutMs: options.timeoutMs ?? 3_000,
    concurrency: options.concurrency ?? 16,
    disableAfterMs: options.disableAfterMs ?? 5 * 86_400_000,
    retentionMs: options.retentionMs ?? 14 * 86_400_000,
    housekeepingIntervalMs: options.housekeepingIntervalMs,
    inOrderWindowMs: options.inOrderWindowMs,
    pollIntervalMs: 100,
    stopGraceMs: 300,
    resolveHost: options.resolveHost,
  });
  await syncAllIndexes(connection, components);
  if (options.worker ?? true) components.worker.start();

  let consumer: EventConsumer | undefined;
  if (options.groupId) {
    const kafka = createKafka({ brokers: kafkaBrokers, clientId: 'webhooks-test', logger });
    await ensureTopics(kafka);
    consumer = await startWebhookConsumer({
      kafka,
      groupId: options.groupId,
      // A new test group would otherwise replay every event other suites ever published; the
      // consumer is ready only after its first fetch, so nothing published later is missed.
      fromBeginning: false,
      connection,
      logger,
      deliveries: components.deliveries,
      webhooksRepository: components.webhooksRepository,
      deliveriesRepository: components.deliveriesRepository,
    });
  }

  const projects = createInternalClient({
    baseUrl: options.projectsUrl,
    internalSecret: TEST_INTERNAL_SECRET,
  });
  const app = createApp({
    logger,
    connection,
    internalSecret: TEST_INTERNAL_SECRET,
    projects,
    components,
  });
  const server: TestServer = await startTestServer(app);

  return {
    url: server.url,
    connection,
    components,
    stop: async () => {
      await server.close();
      await consumer?.stop();
      await components.worker.stop();
      await connection.close();
    },
  };
}

/** Drops a test file's database at the end. */
export async function dropDatabase(dbName: string): Promise<void> {
  const { mongoUrl } = testInfraUrls();
  const connection = await connectMongo({ url: mongoUrl, dbName, logger: testLogger() });
  await connection.dropDatabase();
  await connection.close();
}

/** Calls the service's API as `accountId`, the way the gateway forwards a request. */
export function apiClient(baseUrl: string, accountId: string) {
  const call = (method: string, path: string, body?: unknown) =>
    requestJson(`${baseUrl}${path}`, { method, headers: identityHeaders(accountId), body });
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}

export const newId = () => randomBytes(12).toString('hex');

/** A project of its own for one test: `{ accountId, projectId, api, base }`. */
export function buildProject(serviceUrl: string, stub: { addProject(p: string, a: string): void }) {
  const accountId = uniqueName('acct');
  const projectId = newId();
  stub.addProject(projectId, accountId);
  return {
    accountId,
    projectId,
    api: apiClient(serviceUrl, accountId),
    base: `/api/projects/${projectId}/webhooks`,
  };
}

/** A status change of a deployment of `projectId`, as the deployments service publishes it. */
export function buildStatusChange(
  overrides: Partial<Omit<DeploymentStatusChangedEvent, 'eventId' | 'occurredAt' | 'type'>> & {
    accountId: string;
    projectId: string;
  },
): DeploymentStatusChangedEvent {
  return newEvent<DeploymentStatusChangedEvent>({
    type: 'deployment.status_changed',
    serviceId: newId(),
    deploymentId: newId(),
    status: 'BUILDING',
    previousStatus: null,
    commitHash: 'a1b2c3d4e5f6',
    ...overrides,
  });
}

export function buildProjectDeleted(accountId: string, projectId: string): ProjectDeletedEvent {
  return newEvent<ProjectDeletedEvent>({ type: 'project.deleted', accountId, projectId });
}

/** Publishes events onto the real topics, keyed as the platform keys them. */
export async function startEventPublisher() {
  const { kafkaBrokers } = testInfraUrls();
  const kafka = createKafka({
    brokers: kafkaBrokers,
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
