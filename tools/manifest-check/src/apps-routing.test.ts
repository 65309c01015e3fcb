import path from 'node:path';
import { REPO_ROOT, type K8sObject } from './checker';
import { SERVICES, containerEnv, findObject, mainContainer } from './kubernetes';
import { NetworkModel, outsidePod, podsOf, type Endpoint } from './network-policy';
import { loadServiceConfig, parsedConfig } from './service-config';
import { OVERLAYS, externalSecrets, useRendered } from './test/rendered';

/**
 * The apps' URLs through k8s/ (k8s/README.md, "The apps' URLs"): the Ingress takes
 * `*.<APPS_DOMAIN>` to the gateway, the gateway forwards hosts under APPS_HOST_SUFFIX to
 * RUNTIME_ROUTER_URL, the deployments Service's port to the router its pods serve
 * (RUNTIME_ROUTER_HOST:PORT, KubernetesRoutes), the router to the app's Service and so its pods;
 * projects announces APPS_URL_TEMPLATE. Each setting is read by its service's own config schema,
 * the runner's settings by its own code, and the apps' objects are the runner's
 * (release-objects.ts, tenancy.ts) for those settings.
 */

const { runnerSettingsOf } = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/runner.env.ts'),
) as { runnerSettingsOf: (config: unknown) => Record<string, any> };
const objects = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/objects.ts'),
) as Record<string, (...args: any[]) => any>;
const { releaseObjects } = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/release-objects.ts'),
) as { releaseObjects: (...args: any[]) => K8sObject[] };
const tenancy = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/tenancy.ts'),
) as Record<string, (...args: any[]) => K8sObject[]>;
const { sampleDeployment, sampleImage } = require(
  path.join(REPO_ROOT, 'services/deployments/src/test/kubernetes-samples.ts'),
) as {
  sampleDeployment: (overrides?: Record<string, unknown>) => any;
  sampleImage: (spec: unknown) => string;
};
const { serviceOfAppHost } = require(
  path.join(REPO_ROOT, 'services/gateway/src/apps/apps.proxy.ts'),
) as { serviceOfAppHost: (host: string, suffix: string) => string | null };

const SERVICE_ID = '6650f1c2a9b3c4d5e6f70001';

/** The container port a Service port reaches on a container (by name or number). */
function targetOf(servicePort: any, container: any): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  return container.ports.find((p: any) => p.name === target || p.containerPort === target)
    ?.containerPort;
}

/** The pod of an app's release, with its namespace as the runner makes it, at `ip`. */
function appPod(settings: unknown, projectId: string, ip: string) {
  const spec = sampleDeployment({ projectId });
  const made = [
    ...tenancy.projectNamespaceObjects!(settings, projectId),
    ...releaseObjects(settings, spec, sampleImage(spec)),
  ];
  return { endpoint: { ...podsOf(made)[0]!, name: `app of ${projectId}`, ip }, objects: made };
}

describe.each(OVERLAYS)('the apps’ URLs in the %s overlay', (overlay) => {
  const result = useRendered(overlay);
  const configOf = (name: keyof typeof SERVICES) =>
    parsedConfig(
      loadServiceConfig(SERVICES[name].config),
      containerEnv(
        mainContainer(findObject(result.objects, 'Deployment', name)),
        result.objects,
        externalSecrets(overlay),
      ).env,
    );
  const deploymentsContainer = () =>
    mainContainer(findObject(result.objects, 'Deployment', 'deployments'));
  const runnerSettings = () => runnerSettingsOf(configOf('deployments'));

  it('are served by the router of the deployments pods, on all their addresses, at their port `router`', () => {
    const config = configOf('deployments');
    const router = deploymentsContainer().ports.find((p: any) => p.name === 'router');
    expect([config.RUNTIME, config.RUNTIME_ROUTER_HOST, router?.containerPort]).toEqual([
      'kubernetes',
      '0.0.0.0',
      config.RUNTIME_ROUTER_PORT,
    ]);
  });

  it('reach that router from the gateway (RUNTIME_ROUTER_URL) through the deployments Service', () => {
    const url = new URL(configOf('gateway').RUNTIME_ROUTER_URL);
    const name = url.hostname.split('.')[0]!;
    const namespace = findObject(result.objects, 'Deployment', 'deployments').metadata.namespace;
    expect(['', `.${namespace}`, `.${namespace}.svc`, `.${namespace}.svc.cluster.local`]).toContain(
      url.hostname.slice(name.length),
    );
    const service = findObject(result.objects, 'Service', name);
    const port = service.spec.ports.find((p: any) => p.port === Number(url.port || 80));
    expect([name, port && targetOf(port, deploymentsContainer())]).toEqual([
      'deployments',
      configOf('deployments').RUNTIME_ROUTER_PORT,
    ]);
  });

  it('name one apps domain: the runner’s, the gateway’s app hosts, the URLs projects announces', () => {
    const settings = runnerSettings();
    const suffix: string = configOf('gateway').APPS_HOST_SUFFIX;
    const url = new URL(configOf('projects').APPS_URL_TEMPLATE.replace('{serviceId}', SERVICE_ID));
    expect(suffix).toBe(`.${settings.appsDomain}`);
    expect([url.host, url.pathname]).toEqual([
      objects.hostOf!(settings, { serviceId: SERVICE_ID }),
      '/',
    ]);
    // The gateway hands the announced host to the router, as the service it names.
    expect(serviceOfAppHost(url.host, suffix)).toBe(SERVICE_ID);
    expect(url.protocol).toBe(new URL(configOf('gateway').PUBLIC_URL).protocol);
  });

  it('come in through the Ingress: every path of `*.<APPS_DOMAIN>` to the gateway', () => {
    const rules = findObject(result.objects, 'Ingress', 'gateway').spec.rules;
    const apps = rules.find((r: any) => r.host === `*.${runnerSettings().appsDomain}`);
    expect(apps?.http.paths).toEqual([
      {
        path: '/',
        pathType: 'Prefix',
        backend: { service: { name: 'gateway', port: { name: 'http' } } },
      },
    ]);
  });

  it('are let into the apps’ namespaces from the namespace the deployments pods run in', () => {
    const deployments = findObject(result.objects, 'Deployment', 'deployments');
    expect(runnerSettings().ingressControllerNamespace).toBe(deployments.metadata.namespace);
  });

  describe('on the network, between the router and an app', () => {
    let model: NetworkModel;
    let ingressOnly: NetworkModel;
    let egressOnly: NetworkModel;
    let app: Endpoint;
    let otherApp: Endpoint;
    let appPort: number;
    let deployments: Endpoint;
    /** Pods that are no app of the runner's, even where they copy an app's labels. */
    let strangers: Endpoint[];

    beforeAll(() => {
      const settings = runnerSettings();
      const own = appPod(settings, '6650f1c2a9b3c4d5e6f70002', '10.244.100.10');
      const other = appPod(settings, '6650f1c2a9b3c4d5e6f70003', '10.244.101.10');
      const builds = tenancy.buildNamespaceObjects!(settings);
      const policies = [...result.objects, ...own.objects, ...other.objects, ...builds];
      model = new NetworkModel(policies);
      ingressOnly = new NetworkModel(policies, { ignoreEgress: true });
      egressOnly = new NetworkModel(policies, { ignoreIngress: true });
      [app, otherApp] = [own.endpoint, other.endpoint];
      // The port the app's Service (the router's target) reaches on its pods.
      const service = own.objects.find((o) => o.kind === 'Service')!;
      const release = own.objects.find((o) => o.kind === 'Deployment')!;
      appPort = targetOf(service.spec.ports[0], mainContainer(release))!;
      const asApp = { labels: app.pod!.labels, ports: [{ name: 'http', containerPort: appPort }] };
      deployments = podsOf(result.objects).find((p) => p.name === 'deployments')!;
      strangers = [
        ...podsOf(result.objects),
        outsidePod('the ingress controller', 'ingress-nginx', {
          'app.kubernetes.io/name': 'ingress-nginx',
        }),
        {
          name: 'a build pod labelled as an app',
          ip: '10.244.102.10',
          pod: {
            namespace: settings.buildNamespace,
            namespaceLabels: {
              ...builds[0]!.metadata.labels,
              'kubernetes.io/metadata.name': settings.buildNamespace,
            },
            ...asApp,
          },
        },
        {
          name: 'a pod in the app’s namespace that is no app',
          ip: '10.244.100.20',
          pod: { ...app.pod!, labels: { run: 'debug' } },
        },
        outsidePod(
          'a pod labelled as an app in a namespace the runner did not make',
          `${settings.appNamespacePrefix}-impostor`,
          asApp.labels,
          asApp.ports,
          '10.244.103.10',
        ),
      ];
    });

    const reachersOf = (target: Endpoint, by: NetworkModel) =>
      [...strangers, otherApp]
        .filter((source) => source !== target && by.canConnect(source, target, appPort))
        .map((source) => source.name)
        .sort();

    it('lets only the deployments pods reach an app’s pods, on the port its Service targets', () => {
      expect(appPort).toBe(8080);
      expect(reachersOf(app, model)).toEqual(['deployments']);
      expect(model.canConnect(deployments, otherApp, appPort)).toBe(true);
    });

    it('has the app’s namespace admit the platform’s namespace alone, even if every egress were open', () => {
      const platform = podsOf(result.objects).map((p) => p.name);
      expect(reachersOf(app, ingressOnly)).toEqual(platform.sort());
    });

    it('lets the deployments pods reach no other pod on that port, nor an app on another, even if every receiver’s ingress were open', () => {
      for (const by of [model, egressOnly]) {
        const reached = strangers
          .filter((target) => target !== deployments && by.canConnect(deployments, target, appPort))
          .map((target) => target.name);
        expect(reached).toEqual([]);
        expect(by.canConnect(deployments, app, 9229)).toBe(false);
      }
      expect(egressOnly.canConnect(deployments, app, appPort)).toBe(true);
    });
  });
});
