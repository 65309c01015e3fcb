import fs from 'node:fs';
import path from 'node:path';
import {
  CHECKER_BUILD_TIMEOUT_MS,
  REPO_ROOT,
  describeProblems,
  type ComposeResult,
} from './checker';
import { DEV_IDP, SERVICES, SERVICE_NAMES } from './kubernetes';
import { composeKafkaProperty } from './test/compose-kafka';
import { composeProject } from './test/rendered';

const NODE_PROCESSES: Record<string, number> = {
  ...Object.fromEntries(SERVICE_NAMES.map((name) => [name, SERVICES[name].port])),
  'dev-idp': DEV_IDP.port,
};

describe('docker-compose.yml', () => {
  let compose: ComposeResult;
  let services: Record<string, any>;

  beforeAll(async () => {
    compose = await composeProject();
    services = compose.project?.services ?? {};
  }, CHECKER_BUILD_TIMEOUT_MS);

  it('loads as docker compose loads it, valid against the Compose specification', () => {
    expect(describeProblems(compose.problems)).toBe('');
    expect(compose.project).not.toBeNull();
  });

  it('has no obsolete version key', () => {
    expect(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8')).not.toMatch(
      /^version:/m,
    );
  });

  it('runs MongoDB 7, Kafka 3.9.1 and Redis 7', () => {
    expect(services.mongo.image).toBe('mongo:7');
    expect(services.kafka.image).toBe('apache/kafka:3.9.1');
    expect(services.redis.image).toBe('redis:7-alpine');
  });

  it('runs Kafka as one KRaft broker and controller, reachable as kafka:9092, without topic auto-creation', () => {
    // Its configuration is written by its command, scripts/infra/compose-kafka.sh (kafka.test.ts
    // checks the login side: SASL_SSL, the users, the ACLs).
    expect(services.kafka.command).toEqual(['bash', '/platform/infra/compose-kafka.sh']);
    const property = composeKafkaProperty;
    expect(property('process.roles')?.split(',').sort()).toEqual(['broker', 'controller']);
    expect(property('node.id')).toBe('1');
    expect(property('controller.quorum.voters')).toBe('1@localhost:$CONTROLLER_PORT');
    expect(property('advertised.listeners')).toBe('SASL_SSL://$HOST:$PORT');
    expect(services.kafka.environment.KAFKA_HOST ?? 'kafka').toBe('kafka');
    expect(services.kafka.environment.KAFKA_PORT ?? '9092').toBe('9092');
    expect(property('controller.listener.names')).toBe('CONTROLLER');
    expect(property('auto.create.topics.enable')).toBe('false');
    for (const key of [
      'offsets.topic.replication.factor',
      'transaction.state.log.replication.factor',
      'transaction.state.log.min.isr',
    ]) {
      expect([key, property(key)]).toEqual([key, '1']);
    }
  });

  it('builds the five services and dev-idp from the one Dockerfile, each with its workspace, with the repository root as context', () => {
    // dockerfile.test.ts checks the Dockerfile itself with each service's arguments.
    for (const name of Object.keys(NODE_PROCESSES)) {
      const build = services[name].build;
      expect([name, build.context]).toEqual([name, REPO_ROOT]);
      expect([name, build.dockerfile]).toEqual([name, 'Dockerfile']);
      const workspace = name === 'dev-idp' ? 'tools/dev-idp' : `services/${name}`;
      expect([name, build.args?.WORKSPACE]).toEqual([name, workspace]);
    }
    expect(fs.existsSync(path.join(REPO_ROOT, 'Dockerfile'))).toBe(true);
  });

  it('publishes only the gateway’s port 8080', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p: any) => `${name}:${p.published}->${p.target}`),
    );
    expect(published).toEqual(['gateway:8080->8080']);
  });

  it('has a health check for every container', () => {
    const without = Object.entries(services)
      .filter(([, s]) => !s.healthcheck?.test || s.healthcheck.disable)
      .map(([name]) => name);
    expect(without).toEqual([]);
  });

  it('checks each Node process’s /readyz on its own port', () => {
    for (const [name, port] of Object.entries(NODE_PROCESSES)) {
      const test = services[name].healthcheck.test.join(' ');
      expect(test).toContain(`http://127.0.0.1:${port}/readyz`);
      expect(services[name].environment.PORT ?? services[name].environment.GATEWAY_PORT).toBe(
        String(port),
      );
    }
  });

  it('checks MongoDB, Kafka and Redis with their own clients', () => {
    expect(services.mongo.healthcheck.test.join(' ')).toContain('mongosh');
    expect(services.kafka.healthcheck.test.join(' ')).toContain('kafka-broker-api-versions.sh');
    expect(services.redis.healthcheck.test.join(' ')).toContain('redis-cli ping');
  });

  it('starts each process only once everything it connects to is healthy', () => {
    const hostsOf = (env: Record<string, string>) =>
      Object.values(env ?? {}).flatMap((value) =>
        [...String(value).matchAll(/(?:\/\/|^|,)([a-z][a-z0-9-]*):\d+/g)].map((m) => m[1]!),
      );
    for (const [name, service] of Object.entries(services)) {
      const needed = new Set(
        hostsOf(service.environment).filter((h) => h in services && h !== name),
      );
      const dependsOn = service.depends_on ?? {};
      for (const dependency of needed) {
        expect([name, dependency, dependsOn[dependency]?.condition]).toEqual([
          name,
          dependency,
          'service_healthy',
        ]);
      }
      for (const [dependency, spec] of Object.entries<any>(dependsOn)) {
        expect([name, dependency, spec.condition]).toEqual([name, dependency, 'service_healthy']);
      }
    }
  });

  it('keeps MongoDB, Kafka and Redis data in named volumes', () => {
    for (const [name, target] of [
      ['mongo', '/data/db'],
      ['kafka', '/var/lib/kafka/data'],
      ['redis', '/data'],
    ]) {
      const volume = services[name!].volumes.find((v: any) => v.target === target);
      expect([name, volume?.type]).toEqual([name, 'volume']);
      expect(Object.keys(compose.project!.volumes ?? {})).toContain(volume.source);
    }
  });

  it('keeps deployments’ builds and runtime directory in named volumes, and lets the gateway reach its router', () => {
    const deployments = services.deployments;
    for (const setting of ['BUILDS_DIR', 'RUNTIME_DIR']) {
      const target = deployments.environment[setting];
      const volume = deployments.volumes.find((v: any) => v.target === target);
      expect([setting, target, volume?.type]).toEqual([
        setting,
        expect.stringMatching(/^\//),
        'volume',
      ]);
      expect(Object.keys(compose.project!.volumes ?? {})).toContain(volume.source);
    }
    // Apps answer at http://<serviceId>.localhost:8080: the gateway forwards them to the router.
    const routerPort = deployments.environment.RUNTIME_ROUTER_PORT ?? '4020';
    expect(services.gateway.environment.RUNTIME_ROUTER_URL).toBe(
      `http://deployments:${routerPort}`,
    );
    expect(services.projects.environment.APPS_URL_TEMPLATE).toBe(
      'http://{serviceId}.localhost:8080',
    );
  });

  it('gives deployments the ENCRYPTION_KEY projects seals with, and a sandbox by default', () => {
    expect(services.deployments.environment.ENCRYPTION_KEY).toBe(
      services.projects.environment.ENCRYPTION_KEY,
    );
    const variables = new Map(compose.variables.map((v) => [v.name, v]));
    expect(variables.get('ENCRYPTION_KEY')?.hasDefault).toBe(true);
    // Never without isolation unless asked for (SANDBOX=none and ALLOW_UNSANDBOXED=true).
    expect(services.deployments.environment.SANDBOX ?? 'bubblewrap').toBe('bubblewrap');
    expect(services.deployments.environment.ALLOW_UNSANDBOXED ?? 'false').toBe('false');
  });

  it('takes every secret from the environment, with a development default', () => {
    const variables = new Map(compose.variables.map((v) => [v.name, v]));
    for (const name of ['INTERNAL_SECRET', 'SESSION_SECRET', 'GOOGLE_CLIENT_ID']) {
      expect([name, variables.get(name)?.hasDefault]).toEqual([name, true]);
    }
    const raw = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const hardCoded = raw.match(/^\s*(INTERNAL_SECRET|SESSION_SECRET):\s*(?!\$\{)\S+/gm) ?? [];
    expect(hardCoded).toEqual([]);
  });

  it('runs dev-idp by default, so a local stack can sign in without Google', () => {
    expect(services['dev-idp'].profiles ?? []).toEqual([]);
    expect(services['dev-idp'].environment.NODE_ENV).toBe('development');
    expect(services.auth.environment.GOOGLE_CERTS_URL).toBe('http://dev-idp:4010/oauth2/v1/certs');
    expect(services.gateway.environment.DEV_IDP_URL).toBe('http://dev-idp:4010');
  });
});
