import {
  APP_SELECTOR,
  buildOutcome,
  releaseObjects as releaseObjectsOf,
  rolloutOutcome,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';
import { BLOCKED_RANGES, buildNamespaceObjects, projectNamespaceObjects } from './tenancy';
import { sampleDeployment, sampleImage, sampleRunnerSettings } from '../../test/kubernetes-samples';

const settings = sampleRunnerSettings;
const spec = sampleDeployment;
const releaseObjects = (these: KubernetesRunnerSettings, deployment: DeploymentSpec) =>
  releaseObjectsOf(these, deployment, sampleImage(deployment));

const byKind = (objects: K8sObject[], kind: string) => objects.find((o) => o.kind === kind)!;

describe('the Kubernetes runner objects', () => {
  it('keeps the variables out of every release object but the Secret', () => {
    const objects = releaseObjects(settings, spec());
    const elsewhere = objects.filter((o) => o.kind !== 'Secret').map((o) => JSON.stringify(o));
    for (const text of elsewhere) expect(text).not.toContain('tok-secret-123');
    const secrets = objects.filter((o) => o.kind === 'Secret').map((o) => JSON.stringify(o));
    expect(secrets.every((text) => text.includes('tok-secret-123'))).toBe(true);
  });

  it('rolls a release out with no unavailable replica, ready on the health check', () => {
    const deployment = byKind(releaseObjects(settings, spec()), 'Deployment') as any;
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    expect(deployment.spec.template.spec.containers[0].readinessProbe.httpGet).toEqual({
      path: '/healthz',
      port: 8080,
    });
    // Limited to its CPU, reserving a fraction of it (a node holds many idle apps); its memory
    // reserved as limited; its disk (what it writes, its log) limited.
    expect(deployment.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '50m', memory: '512Mi' },
      limits: { cpu: '500m', memory: '512Mi', 'ephemeral-storage': '114Mi' },
    });
    // A replaced pod serves on until kube-proxy has taken it out of the Service.
    expect(deployment.spec.template.spec.containers[0].lifecycle).toEqual({
      preStop: { sleep: { seconds: 5 } },
    });
    const ingress = byKind(releaseObjects(settings, spec()), 'Ingress') as any;
    expect(ingress.spec.rules[0].host).toBe(`${spec().serviceId}.apps.example.com`);
  });

  it('labels a release’s pods with its deployment, which the selector leaves out', () => {
    const deployment = byKind(releaseObjects(settings, spec()), 'Deployment') as any;
    expect(deployment.spec.template.metadata.labels).toMatchObject({
      'platform.dev/deployment-id': spec().deploymentId,
    });
    expect(deployment.spec.selector.matchLabels).not.toHaveProperty('platform.dev/deployment-id');
    for (const object of releaseObjects(settings, spec())) {
      expect(Object.entries(object.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`)).toEqual(
        expect.arrayContaining(APP_SELECTOR.split(',')),
      );
    }
  });
});

describe('what stands between a tenant and the platform', () => {
  const projectId = spec().projectId;
  const objects = projectNamespaceObjects(settings, projectId);
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy') as any[];

  it('runs each project’s release in a namespace of its own', () => {
    const namespaces = new Set(releaseObjects(settings, spec()).map((o) => o.metadata.namespace));
    expect([...namespaces]).toEqual([`tenant-${projectId}`]);
    const other = releaseObjects(settings, spec({ projectId: '6650f1c2a9b3c4d5e6f70999' }));
    expect(other[0]!.metadata.namespace).toBe('tenant-6650f1c2a9b3c4d5e6f70999');
    expect(byKind(objects, 'Namespace').metadata.name).toBe(`tenant-${projectId}`);
  });

  it('enforces the restricted Pod Security Standard there (baseline for builds, for kaniko)', () => {
    expect(byKind(objects, 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
    expect(byKind(buildNamespaceObjects(settings), 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'baseline',
    });
  });

  it('denies all traffic but the ingress controller’s in and public addresses and DNS out', () => {
    const deny = policies.find((p) => p.metadata.name === 'default-deny');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const allowed = policies.find((p) => p.metadata.name === 'tenant-traffic');
    expect(allowed.spec.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ]);
    const [internet, dns] = allowed.spec.egress;
    expect(internet.to).toEqual([
      { ipBlock: { cidr: '0.0.0.0/0', except: [...BLOCKED_RANGES, ...settings.clusterCidrs] } },
    ]);
    expect(internet.ports).toBeUndefined();
    for (const range of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '169.254.0.0/16',
      '100.64.0.0/10',
      '127.0.0.0/8',
    ]) {
      expect(BLOCKED_RANGES).toContain(range);
    }
    expect(dns.to[0].podSelector).toEqual({ matchLabels: { 'k8s-app': 'kube-dns' } });
    expect(dns.to).toHaveLength(1);
    expect(dns.ports.map((p: { port: number }) => p.port)).toEqual([53, 53]);
  });

  it('opens port 53 of a cluster DNS that is no kube-dns pod, and nothing else of it', () => {
    const withNodeDns = { ...settings, clusterDnsCidrs: ['169.254.20.10/32'] };
    const allowed = projectNamespaceObjects(withNodeDns, projectId).find(
      (o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'tenant-traffic',
    ) as any;
    const [internet, dns] = allowed.spec.egress;
    expect(internet.to[0].ipBlock.except).toContain('169.254.0.0/16');
    expect(dns.to).toEqual([
      expect.objectContaining({ podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }),
      { ipBlock: { cidr: '169.254.20.10/32' } },
    ]);
    expect(dns.ports).toEqual([
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ]);
  });

  it('lets tenants reach the addresses of KUBE_EGRESS_ALLOW, on any port, and no more', () => {
    const withRegistries = { ...settings, egressAllow: ['203.0.113.7/32'] };
    const allowed = projectNamespaceObjects(withRegistries, projectId).find(
      (o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'tenant-traffic',
    ) as any;
    const [internet] = allowed.spec.egress;
    expect(internet.to).toEqual([
      expect.objectContaining({ ipBlock: expect.objectContaining({ cidr: '0.0.0.0/0' }) }),
      { ipBlock: { cidr: '203.0.113.7/32' } },
    ]);
    expect(internet.ports).toBeUndefined();
    expect(allowed.spec.egress).toHaveLength(2);
  });

  it('bounds the project with a ResourceQuota and each container with a LimitRange', () => {
    expect((byKind(objects, 'ResourceQuota') as any).spec.hard).toMatchObject({
      pods: '20',
      'limits.cpu': '4',
      'limits.memory': '4Gi',
      'services.loadbalancers': '0',
      'services.nodeports': '0',
    });
    expect((byKind(objects, 'LimitRange') as any).spec.limits[0]).toMatchObject({
      type: 'Container',
      default: { cpu: '500m', memory: '512Mi' },
      max: { cpu: '4', memory: '4Gi' },
    });
  });
});

describe('rolloutOutcome', () => {
  const deployment = (status: object, generation = 2) => ({
    metadata: { generation },
    spec: { replicas: 1 },
    status: { observedGeneration: 2, ...status },
  });

  it.each([
    [
      'the controller has not seen the change',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, 3),
      'DEPLOYING',
    ],
    [
      'the new pod is not ready yet, the old one serves',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYING',
    ],
    [
      'the new pod is ready, the old one still terminating',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 2 }),
      'DEPLOYING',
    ],
    [
      'only the new pod is left, available',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYED',
    ],
    [
      'the progress deadline passed',
      deployment({
        replicas: 2,
        updatedReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      'FAILED',
    ],
  ])('is %s → %s', (_what, object, outcome) => {
    expect(rolloutOutcome(object)).toBe(outcome);
  });
});

describe('buildOutcome', () => {
  it.each([
    [{}, { state: 'running' }],
    [{ conditions: [{ type: 'Complete', status: 'True' }] }, { state: 'succeeded' }],
    [
      { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] },
      { state: 'failed', reason: 'DeadlineExceeded' },
    ],
  ])('reads %j', (status, outcome) => {
    expect(buildOutcome({ status })).toEqual(outcome);
  });
});
