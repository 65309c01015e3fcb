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

/**
 * What the deployments container's sandbox uses (docs/tenant-isolation.md): namespaces and mounts
 * (SYS_ADMIN, SYS_CHROOT), a veth pair and nftables rules per sandbox (NET_ADMIN), its DNS
 * forwarder on port 53 (NET_BIND_SERVICE), dropping each sandbox to a uid of its own (SETUID,
 * SETGID, SETPCAP), handing it its workspace (CHOWN, DAC_OVERRIDE, FOWNER), entering and ending
 * sandboxes that run as other uids (SYS_PTRACE, KILL).
 */
const DEPLOYMENTS_CAPABILITIES = [
  'SYS_ADMIN',
  'SYS_CHROOT',
  'NET_ADMIN',
  'NET_BIND_SERVICE',
  'SETUID',
  'SETGID',
  'SETPCAP',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'SYS_PTRACE',
  'KILL',
];

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
        [...String(value).matchAll(/(?:\/\/|^|,|@)([a-z][a-z0-9-]*):\d+/g)].map((m) => m[1]!),
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

  it('runs the local runtime, which fits one host (k8s/ runs the Kubernetes runner)', () => {
    expect(services.deployments.environment.RUNTIME).toBe('local');
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

  it('gives MongoDB a user, and every service that uses it a URL with that user and password', () => {
    const mongo = services.mongo.environment;
    expect(mongo.MONGO_INITDB_ROOT_USERNAME).toEqual(expect.any(String));
    expect(mongo.MONGO_INITDB_ROOT_PASSWORD).toEqual(expect.any(String));
    const users = Object.entries(services).filter(([, s]) => s.environment?.MONGO_URL);
    expect(users.map(([name]) => name).sort()).toEqual(
      ['auth', 'deployments', 'projects', 'webhooks'].sort(),
    );
    for (const [name, service] of users) {
      const url = new URL(service.environment.MONGO_URL);
      expect([name, url.host, decodeURIComponent(url.username)]).toEqual([
        name,
        'mongo:27017',
        mongo.MONGO_INITDB_ROOT_USERNAME,
      ]);
      expect([name, decodeURIComponent(url.password)]).toEqual([
        name,
        mongo.MONGO_INITDB_ROOT_PASSWORD,
      ]);
      expect([name, url.searchParams.get('authSource')]).toEqual([name, 'admin']);
    }
  });

  it('runs Redis with a password (read on its standard input, not its command line) and gives the gateway a URL with it', () => {
    const redis = services.redis;
    const password = redis.environment.REDIS_PASSWORD;
    expect(password).toEqual(expect.any(String));
    const script = redis.command.join(' ');
    expect(script).toMatch(/exec redis-server - /);
    expect(script).toContain('requirepass $REDIS_PASSWORD');
    expect(script).not.toContain(password);
    expect(redis.healthcheck.test.join(' ')).toContain('REDISCLI_AUTH="$REDIS_PASSWORD"');
    const url = new URL(services.gateway.environment.REDIS_URL);
    expect([url.host, decodeURIComponent(url.password)]).toEqual(['redis:6379', password]);
  });

  it('makes every Node process listen on all the container’s addresses (HOST), the router too', () => {
    // Outside a container they listen on 127.0.0.1 only (libs/shared boot.ts).
    for (const name of Object.keys(NODE_PROCESSES)) {
      expect([name, services[name].environment.HOST]).toEqual([name, '0.0.0.0']);
    }
    expect(services.deployments.environment.RUNTIME_ROUTER_HOST).toBe('0.0.0.0');
  });

  it('gives the deployments container what its sandbox needs (root with a few capabilities), and no other container any', () => {
    const deployments = services.deployments;
    expect(deployments.user).toBe('0:0');
    expect(deployments.cap_drop).toEqual(['ALL']);
    expect([...deployments.cap_add].sort()).toEqual([...DEPLOYMENTS_CAPABILITIES].sort());
    expect(deployments.cgroup).toBe('private');
    expect(deployments.build.args.PACKAGES.split(' ')).toEqual(
      expect.arrayContaining(['bubblewrap', 'iproute2', 'nftables']),
    );
    for (const [name, service] of Object.entries(services)) {
      if (name === 'deployments' || !(name in NODE_PROCESSES)) continue;
      expect([name, service.cap_add ?? [], service.cap_drop]).toEqual([name, [], ['ALL']]);
      expect([name, service.user]).toEqual([name, undefined]);
    }
  });

  it('runs dev-idp by default, so a local stack can sign in without Google', () => {
    expect(services['dev-idp'].profiles ?? []).toEqual([]);
    expect(services['dev-idp'].environment.NODE_ENV).toBe('development');
    expect(services.auth.environment.GOOGLE_CERTS_URL).toBe('http://dev-idp:4010/oauth2/v1/certs');
    expect(services.gateway.environment.DEV_IDP_URL).toBe('http://dev-idp:4010');
  });
});
