import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, type Consumer, type SASLOptions } from 'kafkajs';
import { openKafka } from './boot';
import { baseEnv, kafkaEnv, parseConfig } from './config';
import { newEvent, TOPICS, type ProjectDeletedEvent } from './events';
import {
  closeKafka,
  createKafka,
  createProducer,
  ensureTopics,
  kafkaConnection,
  type KafkaConnection,
} from './kafka';
import { watchEvents } from './kafka-consumer';
import { Lifecycle } from './lifecycle';
import { testInfraUrls, testLogger, uniqueName, waitFor } from './testing';

/**
 * The broker's side of contracts.md "Trust inside the platform": Kafka connections authenticate
 * (SASL/SCRAM-SHA-512), and each service's user may write only its own topics and use only its
 * own consumer groups (scripts/infra/kafka-acls.sh). Against the run's broker, with the services'
 * passwords from the environment (KAFKA_SASL_PASSWORD_<SERVICE>, from `infra.sh url kafka`).
 */
type Service = 'projects' | 'deployments' | 'webhooks';

function passwordOf(service: Service): string {
  const name = `KAFKA_SASL_PASSWORD_${service.toUpperCase()}`;
  const password = process.env[name];
  if (!password) {
    throw new Error(
      `${name} is not set: these tests need a broker with SASL users (scripts/infra/infra.sh url kafka)`,
    );
  }
  return password;
}

/** The run's broker and login settings, logged in as `service` instead (as start.sh does). */
function settingsAs(service: Service, password = passwordOf(service)) {
  return kafkaEnv.parse({
    ...process.env,
    KAFKA_SASL_USERNAME: service,
    KAFKA_SASL_PASSWORD: password,
  });
}

/**
 * A kafkajs client that gives up at the first failure: a refusal is not retried for a minute.
 * Plain kafkajs, so what is tested is the broker, with the connection settings the services use.
 */
function oneShotClient({ brokers, sasl, ssl }: KafkaConnection) {
  return new Kafka({
    brokers,
    ...(sasl ? { sasl: sasl as SASLOptions } : {}),
    ...(ssl ? { ssl } : {}),
    clientId: 'kafka-auth-test',
    connectionTimeout: 3_000,
    retry: { retries: 0 },
    logCreator: () => () => undefined,
  });
}

/** Lists the topics through an admin of `kafka`: succeeds only for a client the broker lets in. */
async function listTopics(kafka: Kafka): Promise<string[]> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}

/**
 * Runs `consumer` (made without restarts) on `topics` until it crashes, and gives the error; or
 * resolves `null` once it has joined and fetched, if it does.
 */
async function joinOrCrash(consumer: Consumer, topics: string[]): Promise<unknown> {
  const off: (() => void)[] = [];
  const outcome = new Promise<unknown>((resolve) => {
    off.push(consumer.on(consumer.events.CRASH, ({ payload }) => resolve(payload.error)));
    off.push(consumer.on(consumer.events.FETCH, () => resolve(null)));
  });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: false });
  await consumer.run({ eachMessage: async () => undefined });
  return outcome.finally(() => off.forEach((stop) => stop()));
}

const noRestart = { retries: 0, restartOnFailure: async () => false };

const projectDeleted = () =>
  newEvent<ProjectDeletedEvent>({
    type: 'project.deleted',
    accountId: uniqueName('kafka-auth-account'),
    projectId: uniqueName('kafka-auth-project'),
  });

describe('the Kafka login settings (kafkaEnv)', () => {
  const settings = (env: Record<string, string>) =>
    kafkaEnv.parse({ KAFKA_BROKERS: 'kafka:9092', ...env });

  it('log in with SCRAM-SHA-512 by default, and only with both a user and a password', () => {
    expect(
      kafkaConnection(settings({ KAFKA_SASL_USERNAME: 'projects', KAFKA_SASL_PASSWORD: 'pw' })),
    ).toEqual({
      brokers: ['kafka:9092'],
      sasl: { mechanism: 'scram-sha-512', username: 'projects', password: 'pw' },
    });
    expect(() => kafkaConnection(settings({ KAFKA_SASL_USERNAME: 'projects' }))).toThrow(
      /set both, or neither/,
    );
    expect(() => kafkaConnection(settings({ KAFKA_SASL_PASSWORD: 'pw' }))).toThrow(
      /set both, or neither/,
    );
    expect(() => settings({ KAFKA_SASL_MECHANISM: 'plain' })).toThrow();
  });

  it('connect over TLS trusting the CA file, read at once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kafka-ca-'));
    try {
      const caFile = join(dir, 'ca.crt');
      writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n');
      expect(
        kafkaConnection(settings({ KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: caFile })).ssl,
      ).toEqual({ ca: [expect.stringContaining('stand-in')] });
      expect(kafkaConnection(settings({ KAFKA_TLS: 'true' })).ssl).toEqual({});
      expect(kafkaConnection(settings({})).ssl).toBeUndefined();
      expect(() =>
        kafkaConnection(settings({ KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: join(dir, 'missing') })),
      ).toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse the published example passwords in production', () => {
    const env = {
      NODE_ENV: 'production',
      INTERNAL_SECRET: 'x'.repeat(40),
      KAFKA_BROKERS: 'kafka:9092',
      KAFKA_SASL_USERNAME: 'projects',
      KAFKA_SASL_PASSWORD: 'local-development-kafka-projects-0123456789',
    };
    expect(() => parseConfig(baseEnv.merge(kafkaEnv), env)).toThrow(/KAFKA_SASL_PASSWORD/);
    expect(() =>
      parseConfig(baseEnv.merge(kafkaEnv), { ...env, KAFKA_SASL_PASSWORD: 'a-real-one' }),
    ).not.toThrow();
  });

  it('are required in production: openKafka refuses to connect without a login', async () => {
    const lifecycle = new Lifecycle(testLogger());
    await expect(
      openKafka(
        { ...settings({}), NODE_ENV: 'production' },
        { logger: testLogger(), lifecycle },
        'projects',
      ),
    ).rejects.toThrow(/production connects to Kafka only with a login/);
    await lifecycle.shutdown('test done');
  });
});

describe('Kafka authentication and ACLs (real broker)', () => {
  const logger = testLogger();
  const clients: Kafka[] = [];
  /** A client (createKafka, as the services make theirs) logged in as `service`. */
  const clientAs = (service: Service) => {
    const kafka = createKafka({
      ...kafkaConnection(settingsAs(service)),
      clientId: `kafka-auth-${service}`,
      logger,
    });
    clients.push(kafka);
    return kafka;
  };
  afterAll(() => clients.forEach((kafka) => closeKafka(kafka, logger)));

  beforeAll(async () => {
    // The platform's topics, as the first service to start creates them.
    const admin = createKafka({ ...testInfraUrls().kafka, clientId: 'kafka-auth-admin', logger });
    clients.push(admin);
    await ensureTopics(admin);
  });

  describe('logging in', () => {
    const { kafka: login } = testInfraUrls();

    it('refuses a client without credentials, and lets the same client in with them', async () => {
      const anonymous = oneShotClient({ brokers: login.brokers, ssl: login.ssl });
      await expect(listTopics(anonymous)).rejects.toThrow();

      const loggedIn = oneShotClient({ ...kafkaConnection(settingsAs('projects')) });
      await expect(listTopics(loggedIn)).resolves.toContain(TOPICS.projectDeleted);
    });

    it('refuses a wrong password, saying the authentication failed', async () => {
      const wrong = oneShotClient(kafkaConnection(settingsAs('projects', 'not-the-password')));
      await expect(listTopics(wrong)).rejects.toMatchObject({
        name: 'KafkaJSSASLAuthenticationError',
        message: expect.stringMatching(/authentication failed/i),
      });
    });

    it('refuses a user that does not exist', async () => {
      const unknown = oneShotClient({
        ...kafkaConnection(settingsAs('projects')),
        sasl: {
          mechanism: 'scram-sha-512',
          username: 'intruder',
          password: passwordOf('projects'),
        },
      });
      await expect(listTopics(unknown)).rejects.toMatchObject({
        name: 'KafkaJSSASLAuthenticationError',
      });
    });
  });

  describe('each service as its own user', () => {
    it.each<Service>(['projects', 'deployments', 'webhooks'])(
      '%s opens its client as at start-up (the platform topics created or found)',
      async (service) => {
        const lifecycle = new Lifecycle(logger);
        try {
          const kafka = await openKafka(settingsAs(service), { logger, lifecycle }, service);
          expect(await listTopics(kafka)).toEqual(expect.arrayContaining(Object.values(TOPICS)));
        } finally {
          await lifecycle.shutdown('test done');
        }
      },
    );

    it("delivers projects' project.deleted to a webhooks consumer in a webhooks group", async () => {
      const seen: string[] = [];
      const watcher = await watchEvents({
        kafka: clientAs('webhooks'),
        groupPrefix: uniqueName('webhooks-auth-test'),
        topics: [TOPICS.projectDeleted],
        logger,
        handle: (event) => void seen.push(event.eventId),
      });
      const producer = createProducer(clientAs('projects'));
      try {
        await producer.connect();
        const event = projectDeleted();
        await producer.send({
          topic: TOPICS.projectDeleted,
          messages: [{ key: event.projectId, value: JSON.stringify(event) }],
        });
        await waitFor(() => seen.includes(event.eventId), { what: 'the event at the consumer' });
      } finally {
        await producer.disconnect();
        await watcher.stop();
      }
    });

    it.each<[Service, string]>([
      ['projects', TOPICS.deploymentStatusChanged],
      ['deployments', TOPICS.projectDeleted],
      ['deployments', TOPICS.serviceDeleted],
      ['webhooks', TOPICS.projectDeleted],
      ['webhooks', TOPICS.deploymentStatusChanged],
    ])('refuses %s writing %s (another service owns it)', async (service, topic) => {
      const producer = createProducer(clientAs(service));
      await producer.connect();
      try {
        await expect(
          producer.send({ topic, messages: [{ value: JSON.stringify(projectDeleted()) }] }),
        ).rejects.toMatchObject({ type: 'TOPIC_AUTHORIZATION_FAILED' });
      } finally {
        await producer.disconnect();
      }
    });

    it('refuses webhooks reading service.deleted, which it does not consume', async () => {
      const consumer = clientAs('webhooks').consumer({
        groupId: uniqueName('webhooks-auth-test'),
        retry: noRestart,
      });
      try {
        expect(await joinOrCrash(consumer, [TOPICS.serviceDeleted])).toMatchObject({
          message: expect.stringMatching(/not authorized to access topics/i),
        });
      } finally {
        await consumer.disconnect();
      }
    });

    it("lets projects join groups named after itself, and no other service's", async () => {
      const kafka = clientAs('projects');
      const own = kafka.consumer({ groupId: uniqueName('projects-auth-test'), retry: noRestart });
      const others = kafka.consumer({
        groupId: uniqueName('deployments-auth-test'),
        retry: noRestart,
      });
      try {
        expect(await joinOrCrash(own, [TOPICS.projectDeleted])).toBeNull();
        // kafkajs reports the broker's GROUP_AUTHORIZATION_FAILED (to the coordinator lookup,
        // which needs the group's Describe right) as not finding the coordinator.
        expect(await joinOrCrash(others, [TOPICS.projectDeleted])).toMatchObject({
          name: 'KafkaJSGroupCoordinatorNotFound',
        });
      } finally {
        await own.disconnect();
        await others.disconnect();
      }
    });
  });
});
