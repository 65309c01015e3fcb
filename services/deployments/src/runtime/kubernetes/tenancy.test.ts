import type { DeploymentSpec, K8sObject, KubernetesRunnerSettings } from './objects';
import { releaseObjects as releaseObjectsOf } from './release-objects';
import { BLOCKED_RANGES, buildNamespaceObjects, projectNamespaceObjects } from './tenancy';
import { sampleDeployment, sampleImage, sampleRunnerSettings } from '../../test/kubernetes-samples';

const settings = sampleRunnerSettings;
const spec = sampleDeployment;
const releaseObjects = (these: KubernetesRunnerSettings, deployment: DeploymentSpec) =>
  releaseObjectsOf(these, deployment, sampleImage(deployment));

const byKind = (objects: K8sObject[], kind: string) => objects.find((o) => o.kind === kind)!;

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
