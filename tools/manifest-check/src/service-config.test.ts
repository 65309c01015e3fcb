import path from 'node:path';
import { CHECKER_BUILD_TIMEOUT_MS, REPO_ROOT, loadCompose, type ComposeResult } from './checker';
import {
  DEV_IDP,
  SERVICES,
  SERVICE_NAMES,
  containerEnv,
  mainContainer,
  objectsOfKind,
  readEnvFile,
} from './kubernetes';
import { configProblems, loadServiceConfig, type ServiceConfig } from './service-config';
import { OVERLAYS, composeProject, externalSecrets, rendered, useRendered } from './test/rendered';

/** Each process's environment schema: the src/config.ts its main.ts loads. */
const configs = new Map<string, ServiceConfig>();
const configOf = (name: string): ServiceConfig => {
  if (!configs.has(name)) {
    const file = name === 'dev-idp' ? DEV_IDP.config : SERVICES[name as 'auth'].config;
    configs.set(name, loadServiceConfig(file));
  }
  return configs.get(name)!;
};
const PROCESSES = [...SERVICE_NAMES, 'dev-idp'];

/** Set by the container runtime or the image, or read by Node itself (the heap's cap), not by our code. */
const RUNTIME_VARIABLES = new Set(['PATH', 'HOSTNAME', 'NODE_OPTIONS']);

describe.each(OVERLAYS)('the environment of the %s overlay', (overlay) => {
  const result = useRendered(overlay);

  const processesHere = () =>
    objectsOfKind(result.objects, 'Deployment')
      .map((d) => d.metadata.name)
      .filter((name) => PROCESSES.includes(name));

  it('resolves every ConfigMap and Secret reference of every container', () => {
    for (const deployment of objectsOfKind(result.objects, 'Deployment')) {
      const { unresolved } = containerEnv(
        mainContainer(deployment),
        result.objects,
        externalSecrets(overlay),
      );
      expect({ deployment: deployment.metadata.name, unresolved }).toEqual({
        deployment: deployment.metadata.name,
        unresolved: [],
      });
    }
  });

  // dev-idp never runs in production (overlays.test.ts checks that it is absent).
  it.each(overlay === 'production' ? [...SERVICE_NAMES] : PROCESSES)(
    'gives %s every variable its config.ts requires, with values it accepts',
    (name) => {
      const deployment = objectsOfKind(result.objects, 'Deployment').find(
        (d) => d.metadata.name === name,
      );
      if (!deployment) throw new Error(`no Deployment ${name}`);
      const { env } = containerEnv(
        mainContainer(deployment),
        result.objects,
        externalSecrets(overlay),
      );
      expect(configProblems(configOf(name), env)).toEqual([]);
    },
  );

  it('sets no variable on a container that its process does not read', () => {
    for (const name of processesHere()) {
      const deployment = objectsOfKind(result.objects, 'Deployment').find(
        (d) => d.metadata.name === name,
      )!;
      const explicit: string[] = (mainContainer(deployment).env ?? []).map(
        (e: { name: string }) => e.name,
      );
      const unread = explicit.filter(
        (v) => !configOf(name).knownVariables.has(v) && !RUNTIME_VARIABLES.has(v),
      );
      expect({ name, unread }).toEqual({ name, unread: [] });
    }
  });

  it('puts no key in a shared ConfigMap that no process reads (a typo would go unnoticed)', () => {
    const read = new Set(processesHere().flatMap((name) => [...configOf(name).knownVariables]));
    for (const configMap of objectsOfKind(result.objects, 'ConfigMap')) {
      const unread = Object.keys(configMap.data ?? {}).filter((key) => !read.has(key));
      expect({ configMap: configMap.metadata.name, unread }).toEqual({
        configMap: configMap.metadata.name,
        unread: [],
      });
    }
  });
});

describe.each(OVERLAYS)('the deployments service of the %s overlay', (overlay) => {
  const result = useRendered(overlay);

  const containerOf = (name: string) =>
    mainContainer(
      objectsOfKind(result.objects, 'Deployment').find((d) => d.metadata.name === name)!,
    );
  const envEntry = (name: string, variable: string) =>
    (containerOf(name).env ?? []).find((e: { name: string }) => e.name === variable);

  it('opens secret variables with the ENCRYPTION_KEY projects seals them with, from the Secret', () => {
    const projects = envEntry('projects', 'ENCRYPTION_KEY')?.valueFrom?.secretKeyRef;
    // The development overlay's generated Secret carries a hash of its content in its name.
    expect(projects).toEqual({
      name: expect.stringMatching(/^platform-secrets(-[a-z0-9]+)?$/),
      key: 'ENCRYPTION_KEY',
    });
    expect(envEntry('deployments', 'ENCRYPTION_KEY')?.valueFrom?.secretKeyRef).toEqual(projects);
  });

  it('runs builds and apps in the cluster (RUNTIME=kubernetes), not in its own pod', () => {
    const { env } = containerEnv(
      containerOf('deployments'),
      result.objects,
      externalSecrets(overlay),
    );
    expect([env.RUNTIME, env.KUBECONFIG, env.RUNTIME_DIR]).toEqual([
      'kubernetes',
      undefined,
      undefined,
    ]);
  });

  it('has a volume at its BUILDS_DIR (the root file system is read-only)', () => {
    const deployment = objectsOfKind(result.objects, 'Deployment').find(
      (d) => d.metadata.name === 'deployments',
    )!;
    for (const setting of ['BUILDS_DIR']) {
      const dir = envEntry('deployments', setting)?.value;
      const mount = (containerOf('deployments').volumeMounts ?? []).find(
        (m: { mountPath: string }) => m.mountPath === dir,
      );
      const volume = deployment.spec.template.spec.volumes.find(
        (v: { name: string }) => v.name === mount?.name,
      );
      expect([setting, dir, mount?.readOnly ?? false, volume?.emptyDir]).toEqual([
        setting,
        expect.stringMatching(/^\//),
        false,
        expect.anything(),
      ]);
    }
  });
});

describe('the production Secret', () => {
  it(
    'lists in platform-secrets.example.env exactly the keys the Deployments reference',
    async () => {
      const { objects } = await rendered('production');
      const referenced = new Set<string>();
      for (const deployment of objectsOfKind(objects, 'Deployment')) {
        for (const entry of mainContainer(deployment).env ?? []) {
          const ref = entry.valueFrom?.secretKeyRef;
          if (ref?.name === 'platform-secrets') referenced.add(ref.key);
        }
      }
      const documented = readEnvFile(
        path.join(REPO_ROOT, 'k8s/overlays/production/platform-secrets.example.env'),
      );
      expect(Object.keys(documented).sort()).toEqual([...referenced].sort());
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );
});

describe('the environment of docker-compose.yml', () => {
  let compose: ComposeResult;

  beforeAll(async () => {
    compose = await composeProject();
  }, CHECKER_BUILD_TIMEOUT_MS);

  it.each(PROCESSES)(
    'gives %s every variable its config.ts requires, with values it accepts',
    (name) => {
      const service = compose.project!.services[name];
      expect(service).toBeDefined();
      expect(configProblems(configOf(name), service.environment ?? {})).toEqual([]);
    },
  );

  it('sets no variable on a service that its process does not read', () => {
    for (const name of PROCESSES) {
      const unread = Object.keys(compose.project!.services[name].environment ?? {}).filter(
        (v) => !configOf(name).knownVariables.has(v) && !RUNTIME_VARIABLES.has(v),
      );
      expect({ name, unread }).toEqual({ name, unread: [] });
    }
  });

  it('still starts every service when the secrets are given through the environment', async () => {
    const given = await loadCompose('docker-compose.yml', {
      INTERNAL_SECRET: 'x'.repeat(40),
      SESSION_SECRET: 'y'.repeat(40),
    });
    expect(given.problems).toEqual([]);
    const gateway = given.project!.services.gateway.environment;
    expect(gateway.INTERNAL_SECRET).toBe('x'.repeat(40));
    expect(gateway.SESSION_SECRET).toBe('y'.repeat(40));
    for (const name of PROCESSES) {
      expect(configProblems(configOf(name), given.project!.services[name].environment)).toEqual([]);
    }
  });

  it('gives a too-short INTERNAL_SECRET to the services, which would refuse to start', async () => {
    const weak = await loadCompose('docker-compose.yml', { INTERNAL_SECRET: 'short' });
    expect(configProblems(configOf('auth'), weak.project!.services.auth.environment)).toEqual([
      'INTERNAL_SECRET: must be at least 32 characters',
    ]);
  });
});
