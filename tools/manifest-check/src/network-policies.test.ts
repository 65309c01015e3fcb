import { CHECKER_BUILD_TIMEOUT_MS, type K8sObject } from './checker';
import { APPS_ROUTER_PORT, SERVICES, SERVICE_NAMES, type ServiceName } from './kubernetes';
import { NetworkModel, host, outsidePod, podsOf, type Endpoint } from './network-policy';
import { OVERLAYS, rendered } from './test/rendered';

const ingressController = outsidePod('ingress controller', 'ingress-nginx', {
  'app.kubernetes.io/name': 'ingress-nginx',
});
// Labels are not identity: a pod elsewhere that copies the gateway's labels gets nothing.
const impostor = outsidePod(
  'a pod in another namespace labelled as the gateway',
  'tenant-a',
  { 'app.kubernetes.io/name': 'gateway' },
  [],
  '10.244.201.10',
);
const strayPod: Endpoint = {
  name: 'a stray pod in the platform namespace',
  ip: '10.244.202.10',
  pod: {
    namespace: 'platform',
    namespaceLabels: { 'kubernetes.io/metadata.name': 'platform' },
    labels: { run: 'debug' },
    ports: [],
  },
};
const internetClient = host('a client on the internet', '203.0.113.7');
const kubeDns = outsidePod('kube-dns', 'kube-system', { 'k8s-app': 'kube-dns' }, [
  { name: 'dns', containerPort: 53, protocol: 'UDP' },
  { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
]);
// MongoDB, Kafka and Redis are outside the manifests, on the environment's network.
const mongo = host('MongoDB', '10.20.0.5');
const kafka = host('Kafka', '10.20.0.6');
const redis = host('Redis', '10.20.0.7');
const publicReceiver = host('a webhook receiver on the internet', '93.184.216.34');
const googleCerts = host('www.googleapis.com', '142.250.74.106');
const cloudMetadata = host('the cloud metadata endpoint', '169.254.169.254');
const privateReceiver = host('a receiver on a private address', '192.168.1.20');
// The deployments service's runner: the cluster's API server and registry, public git hosts.
const apiServer = host('the Kubernetes API server', '10.0.0.2');
const registry = host('the image registry', '10.20.0.8');
const gitHost = host('a public git host', '140.82.112.3');

describe.each(OVERLAYS)('the NetworkPolicies of the %s overlay', (overlay) => {
  let model: NetworkModel;
  let ingressOnly: NetworkModel;
  let pods: Endpoint[];
  let everyone: Endpoint[];
  const pod = (name: string) => pods.find((p) => p.name === name)!;
  const reachersOf = (target: string, port = portOf(target), by = model) =>
    everyone
      .filter((source) => source !== pod(target) && by.canConnect(source, pod(target), port))
      .map((source) => source.name)
      .sort();
  const reachersOfHost = (target: Endpoint, port: number) =>
    pods
      .filter((source) => model.canConnect(source, target, port))
      .map((source) => source.name)
      .sort();

  beforeAll(async () => {
    const { objects } = await rendered(overlay);
    model = new NetworkModel(objects);
    ingressOnly = new NetworkModel(objects, { ignoreEgress: true });
    pods = podsOf(objects);
    everyone = [...pods, ingressController, impostor, strayPod, internetClient];
  }, CHECKER_BUILD_TIMEOUT_MS);

  // Each receiver's ingress policy must hold by itself, not only thanks to the senders' egress.
  describe.each([
    ['as rendered', () => model],
    ['even if every sender’s egress were open', () => ingressOnly],
  ])('%s', (_when, by) => {
    it('lets only the ingress controller reach the gateway', () => {
      expect(reachersOf('gateway', 8080, by())).toEqual(['ingress controller']);
    });

    it('lets only the gateway reach the auth service', () => {
      expect(reachersOf('auth', 4001, by())).toEqual(['gateway']);
    });

    it('lets only the gateway, deployments and webhooks reach the projects service', () => {
      expect(reachersOf('projects', 4002, by())).toEqual(['deployments', 'gateway', 'webhooks']);
    });

    it('lets only the gateway and webhooks reach the deployments service', () => {
      expect(reachersOf('deployments', 4003, by())).toEqual(['gateway', 'webhooks']);
    });

    it('lets only the gateway reach the apps’ router in the deployments pods', () => {
      expect(reachersOf('deployments', APPS_ROUTER_PORT, by())).toEqual(['gateway']);
    });

    it('lets only the gateway reach the webhooks service', () => {
      expect(reachersOf('webhooks', 4004, by())).toEqual(['gateway']);
    });
  });

  it('lets no one reach a service on any other port (a debugger’s 9229, say)', () => {
    for (const name of SERVICE_NAMES) expect(reachersOf(name, 9229, ingressOnly)).toEqual([]);
  });

  it('lets every pod resolve names through kube-dns', () => {
    for (const source of pods) expect(model.canConnect(source, kubeDns, 53, 'UDP')).toBe(true);
  });

  it('lets only the services that own a database reach MongoDB', () => {
    expect(reachersOfHost(mongo, 27017)).toEqual(['auth', 'deployments', 'projects', 'webhooks']);
  });

  it('lets only projects, deployments and webhooks reach Kafka', () => {
    expect(reachersOfHost(kafka, 9092)).toEqual(['deployments', 'projects', 'webhooks']);
  });

  it('lets only the gateway reach Redis', () => {
    expect(reachersOfHost(redis, 6379)).toEqual(['gateway']);
  });

  it('lets webhooks deliver to public addresses over HTTP and HTTPS only', () => {
    const webhooks = pod('webhooks');
    expect(model.canConnect(webhooks, publicReceiver, 443)).toBe(true);
    expect(model.canConnect(webhooks, publicReceiver, 80)).toBe(true);
    expect(model.canConnect(webhooks, publicReceiver, 25)).toBe(false);
    expect(model.canConnect(webhooks, cloudMetadata, 80)).toBe(false);
    expect(model.canConnect(webhooks, privateReceiver, 443)).toBe(false);
  });

  it('lets only auth (Google’s certificates), deployments (repositories) and webhooks (receivers) reach the internet', () => {
    expect(reachersOfHost(googleCerts, 443)).toEqual(['auth', 'deployments', 'webhooks']);
    expect(reachersOfHost(gitHost, 80)).toEqual(['webhooks']);
  });

  it('lets only deployments reach the API server and the image registry', () => {
    expect(reachersOfHost(apiServer, 6443)).toEqual(['deployments']);
    expect(reachersOfHost(registry, 5000)).toEqual(['deployments']);
  });

  it('lets deployments fetch repositories over https from public addresses only', () => {
    const deployments = pod('deployments');
    expect(model.canConnect(deployments, gitHost, 443)).toBe(true);
    expect(model.canConnect(deployments, gitHost, 22)).toBe(false);
    expect(model.canConnect(deployments, cloudMetadata, 443)).toBe(false);
    expect(model.canConnect(deployments, privateReceiver, 443)).toBe(false);
  });
});

describe('the development identity provider’s policies', () => {
  let model: NetworkModel;
  let pods: Endpoint[];

  beforeAll(async () => {
    const { objects } = await rendered('development');
    model = new NetworkModel(objects);
    pods = podsOf(objects);
  }, CHECKER_BUILD_TIMEOUT_MS);

  it('let only the gateway (the /dev/ page) and auth (certificates) reach dev-idp', () => {
    const devIdp = pods.find((p) => p.name === 'dev-idp')!;
    const reachers = [...pods, ingressController, strayPod]
      .filter((p) => p !== devIdp && model.canConnect(p, devIdp, 4010))
      .map((p) => p.name)
      .sort();
    expect(reachers).toEqual(['auth', 'gateway']);
  });
});

describe('the reachability model', () => {
  const servicePod = (name: ServiceName): Endpoint =>
    outsidePod(name, 'platform', { 'app.kubernetes.io/name': name }, [
      { name: 'http', containerPort: SERVICES[name].port },
    ]);
  const policy = (name: string, spec: Record<string, unknown>): K8sObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: 'platform' },
    spec,
  });
  const auth = servicePod('auth');
  const gateway = servicePod('gateway');
  const projects = servicePod('projects');

  it('lets everything through when no policy selects a pod', () => {
    expect(new NetworkModel([]).canConnect(projects, auth, 4001)).toBe(true);
  });

  it(
    'notices policies that open auth to every pod in the namespace',
    async () => {
      const { objects } = await rendered('production');
      const openIngress = policy('auth-open-ingress', {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'auth' } },
        ingress: [{ from: [{ podSelector: {} }] }],
      });
      const openEgress = policy('open-egress', {
        podSelector: {},
        policyTypes: ['Egress'],
        egress: [{}],
      });
      const podNamed = (name: string) => podsOf(objects).find((p) => p.name === name)!;
      const projectsToAuth = (policies: K8sObject[]) =>
        new NetworkModel(policies).canConnect(podNamed('projects'), podNamed('auth'), 4001);
      expect(projectsToAuth(objects)).toBe(false);
      // Opening auth's ingress alone is not enough: projects' egress must allow it too.
      expect(projectsToAuth([...objects, openIngress])).toBe(false);
      expect(projectsToAuth([...objects, openIngress, openEgress])).toBe(true);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it('reads a namespace and a pod selector in one peer as AND, in two peers as OR', () => {
    const fromIngress = (peers: unknown[]) =>
      new NetworkModel([
        policy('gateway-in', {
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } },
          ingress: [{ from: peers }],
        }),
      ]);
    const namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } };
    const podSelector = { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } };
    const otherPodInIngressNamespace = outsidePod('other', 'ingress-nginx', { app: 'other' });

    const and = fromIngress([{ namespaceSelector, podSelector }]);
    expect(and.canConnect(ingressController, gateway, 8080)).toBe(true);
    expect(and.canConnect(otherPodInIngressNamespace, gateway, 8080)).toBe(false);

    const or = fromIngress([{ namespaceSelector }, { podSelector }]);
    expect(or.canConnect(otherPodInIngressNamespace, gateway, 8080)).toBe(true);
  });

  it('resolves a named port against the receiving pod’s container ports', () => {
    const model = new NetworkModel([
      policy('auth-in', {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'auth' } },
        ingress: [{ ports: [{ port: 'http' }] }],
      }),
    ]);
    expect(model.canConnect(gateway, auth, 4001)).toBe(true);
    expect(model.canConnect(gateway, auth, 4002)).toBe(false);
  });
});

function portOf(name: string): number {
  return name === 'dev-idp' ? 4010 : SERVICES[name as ServiceName].port;
}
