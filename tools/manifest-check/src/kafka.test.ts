import fs from 'node:fs';
import path from 'node:path';
import { CHECKER_BUILD_TIMEOUT_MS, REPO_ROOT, type ComposeProject } from './checker';
import {
  SERVICES,
  SERVICE_NAMES,
  containerEnv,
  findObject,
  mainContainer,
  type ServiceName,
} from './kubernetes';
import { loadServiceConfig } from './service-config';
import { composeKafkaProperty } from './test/compose-kafka';
import { OVERLAYS, composeProject, externalSecrets, rendered } from './test/rendered';

/**
 * contracts.md, "Trust inside the platform": Kafka connections authenticate with SCRAM-SHA-512
 * over TLS in docker-compose and Kubernetes, each service as its own user. So every service that
 * reads Kafka settings gets its own user and its password from the Secret (Kubernetes) or the
 * environment (compose), TLS on, and compose's broker listens with SASL_SSL only.
 */
const acls = fs.readFileSync(path.join(REPO_ROOT, 'scripts/infra/kafka-acls.sh'), 'utf8');
/** The users the brokers' ACLs know (scripts/infra/kafka-acls.sh). */
const KAFKA_USERS = acls.match(/^KAFKA_SERVICE_USERS="([^"]*)"/m)![1]!.split(' ');

/** The services whose config schema reads a Kafka login. */
const KAFKA_SERVICES = SERVICE_NAMES.filter((name) =>
  loadServiceConfig(SERVICES[name].config).knownVariables.has('KAFKA_SASL_PASSWORD'),
);

const secretKeyOf = (service: ServiceName) => `KAFKA_SASL_PASSWORD_${service.toUpperCase()}`;

describe('Kafka logins', () => {
  it('are those of the services that use Kafka, each a user the ACLs know', () => {
    expect(KAFKA_SERVICES.length).toBeGreaterThan(0);
    expect([...KAFKA_SERVICES].sort()).toEqual([...KAFKA_USERS].sort());
  });

  describe.each(OVERLAYS)('in the %s overlay', (overlay) => {
    it.each(KAFKA_SERVICES)(
      'log %s in as itself, the password from the Secret, over TLS',
      async (service) => {
        const { objects } = await rendered(overlay);
        const container = mainContainer(findObject(objects, 'Deployment', service));
        const entry = (name: string) =>
          (container.env ?? []).find((e: { name: string }) => e.name === name);
        expect(entry('KAFKA_SASL_USERNAME')).toEqual({
          name: 'KAFKA_SASL_USERNAME',
          value: service,
        });
        expect(entry('KAFKA_SASL_PASSWORD')).toEqual({
          name: 'KAFKA_SASL_PASSWORD',
          valueFrom: {
            secretKeyRef: {
              // The development overlay's generated Secret carries a hash of its content.
              name: expect.stringMatching(/^platform-secrets(-[a-z0-9]+)?$/),
              key: secretKeyOf(service),
            },
          },
        });
        const { env, unresolved } = containerEnv(container, objects, externalSecrets(overlay));
        expect(unresolved).toEqual([]);
        expect(env).toMatchObject({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-512' });
      },
      CHECKER_BUILD_TIMEOUT_MS,
    );
  });

  describe('in docker-compose', () => {
    let project: ComposeProject;
    beforeAll(async () => {
      project = (await composeProject()).project!;
    }, CHECKER_BUILD_TIMEOUT_MS);

    it.each(KAFKA_SERVICES)(
      'log %s in as itself, over TLS with the broker CA, with the password the broker gets',
      (service) => {
        const env = project.services[service].environment;
        expect(env).toMatchObject({
          KAFKA_BROKERS: 'kafka:9092',
          KAFKA_SASL_USERNAME: service,
          KAFKA_TLS: 'true',
          KAFKA_TLS_CA_FILE: '/etc/kafka-tls/ca.crt',
        });
        expect(env.KAFKA_SASL_PASSWORD).toEqual(expect.any(String));
        // The broker creates the user with the very same value.
        expect(project.services.kafka.environment[`KAFKA_PASSWORD_${service.toUpperCase()}`]).toBe(
          env.KAFKA_SASL_PASSWORD,
        );
        expect(project.services[service].volumes).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              source: 'kafka-tls',
              target: '/etc/kafka-tls',
              read_only: true,
            }),
          ]),
        );
      },
    );

    it('runs the broker with SASL_SSL as its only client listener', () => {
      const kafka = project.services.kafka;
      expect(kafka.command).toEqual(['bash', '/platform/infra/compose-kafka.sh']);
      const property = composeKafkaProperty;
      expect(property('listeners')).toBe(
        'SASL_SSL://:$PORT,CONTROLLER://localhost:$CONTROLLER_PORT',
      );
      expect(property('listener.security.protocol.map')).toBe(
        'SASL_SSL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT',
      );
      expect(property('sasl.enabled.mechanisms')).toBe('SCRAM-SHA-512');
      expect(property('authorizer.class.name')).toBe(
        'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      );
      expect(property('allow.everyone.if.no.acl.found')).toBe('false');
      // Only the broker's own port is reachable on the network, and it is the SASL_SSL one.
      expect(kafka.ports ?? []).toEqual([]);
    });
  });
});
