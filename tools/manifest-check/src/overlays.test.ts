import { CHECKER_BUILD_TIMEOUT_MS, type K8sObject } from './checker';
import {
  SERVICE_NAMES,
  containerEnv,
  findObject,
  mainContainer,
  objectsOfKind,
} from './kubernetes';
import { externalSecrets, rendered, useRendered } from './test/rendered';

/** The data of the generated ConfigMap `<name>-<hash>`. */
const configOf = (objects: K8sObject[], name = 'platform-config') => {
  const configMaps = objectsOfKind(objects, 'ConfigMap').filter((c) =>
    new RegExp(`^${name}-[a-z0-9]+$`).test(c.metadata.name),
  );
  expect(configMaps).toHaveLength(1);
  return configMaps[0]!.data as Record<string, string>;
};

describe('the production overlay', () => {
  const result = useRendered('production');

  it('does not run the development identity provider or point anything at it', () => {
    const mentions = result.objects.filter((o) => JSON.stringify(o).includes('dev-idp'));
    expect(mentions.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
  });

  it('runs every service with NODE_ENV=production, secure cookies and no private webhook targets', () => {
    for (const name of SERVICE_NAMES) {
      const { env } = containerEnv(
        mainContainer(findObject(result.objects, 'Deployment', name)),
        result.objects,
        externalSecrets('production'),
      );
      expect([name, env.NODE_ENV, env.COOKIE_SECURE, env.WEBHOOK_ALLOW_PRIVATE]).toEqual([
        name,
        'production',
        'true',
        'false',
      ]);
    }
  });

  it('creates no Secret: platform-secrets is made outside git', () => {
    expect(objectsOfKind(result.objects, 'Secret')).toEqual([]);
  });

  it('terminates TLS at the Ingress for every host it serves', () => {
    const ingress = findObject(result.objects, 'Ingress', 'gateway');
    const hosts = ingress.spec.rules.map((r: { host: string }) => r.host);
    const tlsHosts = (ingress.spec.tls ?? []).flatMap((t: { hosts: string[] }) => t.hosts);
    expect(hosts.length).toBeGreaterThan(0);
    expect(tlsHosts.sort()).toEqual([...hosts].sort());
    for (const tls of ingress.spec.tls) expect(tls.secretName).toBeTruthy();
  });

  it('keeps at least two replicas of every service and lets the autoscaler add more', () => {
    for (const name of SERVICE_NAMES) {
      const hpa = findObject(result.objects, 'HorizontalPodAutoscaler', name);
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    }
  });

  it('runs builds’ and apps’ pods under gVisor: the RuntimeClass gvisor, handler runsc', () => {
    expect(configOf(result.objects, 'deployments-runner').KUBE_RUNTIME_CLASS).toBe('gvisor');
    const runtimeClass = findObject(result.objects, 'RuntimeClass', 'gvisor');
    expect([runtimeClass.apiVersion, runtimeClass.handler]).toEqual(['node.k8s.io/v1', 'runsc']);
  });

  it('pins release tags, never latest or dev', () => {
    for (const deployment of objectsOfKind(result.objects, 'Deployment')) {
      const tag = mainContainer(deployment).image.split(':').pop();
      expect(tag).toMatch(/^v?\d+\.\d+\.\d+([-+][\w.]+)?$|^sha256:/);
    }
  });
});

describe('the development overlay', () => {
  const result = useRendered('development');

  it('runs one replica of each service and no autoscalers', () => {
    for (const deployment of objectsOfKind(result.objects, 'Deployment')) {
      expect([deployment.metadata.name, deployment.spec.replicas]).toEqual([
        deployment.metadata.name,
        1,
      ]);
    }
    expect(objectsOfKind(result.objects, 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('runs dev-idp and has auth read its certificates and the gateway serve its page', () => {
    findObject(result.objects, 'Deployment', 'dev-idp');
    const service = findObject(result.objects, 'Service', 'dev-idp');
    const config = configOf(result.objects);
    const devIdpUrl = `http://dev-idp:${service.spec.ports[0].port}`;
    expect(config.GOOGLE_CERTS_URL).toBe(`${devIdpUrl}/oauth2/v1/certs`);
    expect(config.DEV_IDP_URL).toBe(devIdpUrl);
  });

  it('sets NODE_ENV=development and lets webhooks reach private addresses', () => {
    const config = configOf(result.objects);
    expect(config.NODE_ENV).toBe('development');
    expect(config.WEBHOOK_ALLOW_PRIVATE).toBe('true');
  });

  it('runs builds and apps on the cluster’s default runtime (kind has no gVisor)', () => {
    expect(configOf(result.objects, 'deployments-runner').KUBE_RUNTIME_CLASS).toBeUndefined();
    expect(objectsOfKind(result.objects, 'RuntimeClass')).toEqual([]);
  });

  it('generates platform-secrets itself', () => {
    const secrets = objectsOfKind(result.objects, 'Secret');
    expect(secrets.map((s) => s.metadata.name)).toEqual([
      expect.stringMatching(/^platform-secrets-/),
    ]);
  });
});

describe.each(['development', 'production'] as const)('the %s Ingress', (overlay) => {
  it(
    'routes to the gateway and nothing else',
    async () => {
      const { objects } = await rendered(overlay);
      const ingresses = objectsOfKind(objects, 'Ingress');
      expect(ingresses).toHaveLength(1);
      const backends = ingresses[0]!.spec.rules.flatMap((rule: any) =>
        rule.http.paths.map((p: any) => p.backend.service.name),
      );
      expect(new Set(backends)).toEqual(new Set(['gateway']));
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );
});
