import { describeProblems } from './checker';
import { NAMESPACE, SERVICE_NAMES, findObject, objectsOfKind, selectorMatches } from './kubernetes';
import { useRendered } from './test/rendered';

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'RuntimeClass',
]);

describe.each(['base', 'development', 'production'] as const)('k8s/%s', (overlay) => {
  const result = useRendered(overlay);

  it('builds with kustomize', () => {
    expect(describeProblems(result.problems.filter((p) => !p.kind))).toBe('');
    expect(result.objects.length).toBeGreaterThan(0);
  });

  it('has only objects that decode strictly into their Kubernetes types and pass API-server validation', () => {
    expect(describeProblems(result.problems)).toBe('');
  });

  it('puts every namespaced object in the platform namespace, but the runner’s rights where builds run', () => {
    const elsewhere = result.objects
      .filter((o) => !CLUSTER_SCOPED.has(o.kind) && o.metadata.namespace !== NAMESPACE)
      .map((o) => `${o.metadata.namespace}: ${o.kind}/${o.metadata.name}`);
    expect(elsewhere).toEqual([
      'platform-builds: Role/platform-deployments-builds',
      'platform-builds: RoleBinding/platform-deployments-builds',
    ]);
  });

  it('leaves no namespace field on a cluster-scoped object', () => {
    const namespaced = result.objects
      .filter((o) => CLUSTER_SCOPED.has(o.kind) && o.metadata.namespace !== undefined)
      .map((o) => `${o.kind}/${o.metadata.name}`);
    expect(namespaced).toEqual([]);
  });

  it('labels every object with app.kubernetes.io/name and app.kubernetes.io/part-of=platform', () => {
    const unlabelled = result.objects
      .filter(
        (o) =>
          !o.metadata.labels?.['app.kubernetes.io/name'] ||
          o.metadata.labels['app.kubernetes.io/part-of'] !== 'platform',
      )
      .map((o) => `${o.kind}/${o.metadata.name}`);
    expect(unlabelled).toEqual([]);
  });

  it('has a Deployment, a ClusterIP Service and a PodDisruptionBudget for each of the five services', () => {
    for (const name of SERVICE_NAMES) {
      const deployment = findObject(result.objects, 'Deployment', name);
      const podLabels = deployment.spec.template.metadata.labels;
      const service = findObject(result.objects, 'Service', name);
      expect(service.spec.type ?? 'ClusterIP').toBe('ClusterIP');
      expect(selectorMatches({ matchLabels: service.spec.selector }, podLabels)).toBe(true);
      const pdb = findObject(result.objects, 'PodDisruptionBudget', name);
      expect(selectorMatches(pdb.spec.selector, podLabels)).toBe(true);
      expect(pdb.spec.maxUnavailable === 1 || pdb.spec.minAvailable === 1).toBe(true);
    }
  });

  it('selects each Deployment’s pods with its Service and nothing else’s', () => {
    for (const service of objectsOfKind(result.objects, 'Service')) {
      const selected = objectsOfKind(result.objects, 'Deployment').filter((d) =>
        selectorMatches({ matchLabels: service.spec.selector }, d.spec.template.metadata.labels),
      );
      expect(selected.map((d) => d.metadata.name)).toEqual([service.metadata.name]);
    }
  });

  it('points every Service port at a port the selected container exposes', () => {
    for (const service of objectsOfKind(result.objects, 'Service')) {
      const container = findObject(result.objects, 'Deployment', service.metadata.name).spec
        .template.spec.containers[0];
      for (const port of service.spec.ports) {
        const target = port.targetPort ?? port.port;
        const exposed = container.ports.some(
          (p: { name?: string; containerPort: number }) =>
            p.name === target || p.containerPort === target,
        );
        expect({ service: service.metadata.name, target, exposed }).toEqual({
          service: service.metadata.name,
          target,
          exposed: true,
        });
      }
    }
  });
});
