import path from 'node:path';
import { REPO_ROOT, type K8sObject } from './checker';
import { containerEnv, findObject, mainContainer, objectsOfKind } from './kubernetes';
import { WRITE_VERBS, bindingsOf, describeRight, rightsOf } from './rbac';
import { OVERLAYS, externalSecrets, useRendered } from './test/rendered';

/**
 * The deployments service's rights in the cluster (k8s/base/deployments-runner.yaml), as each
 * overlay renders them. That they suffice, and that what they leave out is refused, is proved on
 * a real cluster by services/deployments/src/runtime/kubernetes/runner-rbac.test.ts.
 */

const tenancy = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/tenancy.ts'),
) as { buildNamespaceObjects: (settings: unknown) => K8sObject[] };
const { sampleRunnerSettings } = require(
  path.join(REPO_ROOT, 'services/deployments/src/test/kubernetes-samples.ts'),
) as { sampleRunnerSettings: Record<string, unknown> };

const RUNNER = { namespace: 'platform', name: 'deployments' };

/** What the runner's calls need, and why: k8s/README.md, "The deployments service's rights". */
const EXPECTED_RIGHTS = [
  '* apps/deployments: create deletecollection get list patch watch',
  '* discovery.k8s.io/endpointslices: list watch',
  '* limitranges: create patch',
  '* namespaces: create patch',
  '* networking.k8s.io/ingresses: create deletecollection patch',
  '* networking.k8s.io/networkpolicies: create patch',
  '* pods/log: get',
  '* pods: list',
  '* resourcequotas: create patch',
  '* secrets: create deletecollection patch',
  '* services: create delete list patch',
  'platform-builds batch/jobs: create delete get',
  'platform-builds pods/exec: create get',
  'platform-builds pods: get',
];

describe.each(OVERLAYS)('the deployments service’s rights in the %s overlay', (overlay) => {
  const result = useRendered(overlay);
  const rights = () => rightsOf(result.objects, RUNNER);
  const runnerEnv = () =>
    containerEnv(
      mainContainer(findObject(result.objects, 'Deployment', 'deployments')),
      result.objects,
      externalSecrets(overlay),
    ).env;

  it('are exactly the verbs its runner’s calls need', () => {
    expect(rights().map(describeRight).sort()).toEqual(EXPECTED_RIGHTS);
  });

  it('hold no wildcard, no escalate, bind or impersonate, nothing on nodes or RBAC, no read of a Secret', () => {
    const risky = rights().filter(
      ({ group, resource, verbs }) =>
        [group, resource, ...verbs].includes('*') ||
        verbs.some((verb) => ['escalate', 'bind', 'impersonate'].includes(verb)) ||
        resource.startsWith('nodes') ||
        ['rbac.authorization.k8s.io', 'admissionregistration.k8s.io'].includes(group) ||
        (resource === 'secrets' && verbs.some((verb) => ['get', 'list', 'watch'].includes(verb))),
    );
    expect(risky.map(describeRight)).toEqual([]);
  });

  it('run pods/exec and Jobs only in the builds’ namespace the runner is configured with', () => {
    const buildNamespace = runnerEnv().KUBE_BUILD_NAMESPACE;
    expect(buildNamespace).toBe('platform-builds');
    const buildOnly = rights().filter((r) => ['pods/exec', 'jobs'].includes(r.resource));
    expect(buildOnly.map((r) => r.scope)).toEqual([buildNamespace, buildNamespace]);
    findObject(result.objects, 'Namespace', buildNamespace!);
  });

  it('belong to the ServiceAccount the deployments pods run as, and to no one else', () => {
    const pod = findObject(result.objects, 'Deployment', 'deployments').spec.template.spec;
    expect([pod.serviceAccountName, pod.automountServiceAccountToken]).toEqual([RUNNER.name, true]);
    const account = findObject(result.objects, 'ServiceAccount', RUNNER.name);
    expect(account.metadata.namespace).toBe(RUNNER.namespace);
    expect(account.automountServiceAccountToken).toBe(false);
    for (const binding of bindingsOf(result.objects, RUNNER)) {
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', ...RUNNER }]);
    }
  });

  describe('the admission policy that holds its writes to its own namespaces', () => {
    const policy = () =>
      findObject(
        result.objects,
        'ValidatingAdmissionPolicy',
        'platform-deployments-runner-namespaces',
      );
    const variable = (name: string) =>
      policy().spec.variables.find((v: { name: string }) => v.name === name)?.expression;

    it('names the builds’ namespace and the apps’ prefix the runner is configured with', () => {
      const env = runnerEnv();
      expect([variable('buildNamespace'), variable('appNamespacePrefix')]).toEqual([
        `'${env.KUBE_BUILD_NAMESPACE}'`,
        `'${env.KUBE_APP_NAMESPACE_PREFIX}-'`,
      ]);
    });

    it('applies to the runner’s ServiceAccount only, and denies', () => {
      expect(policy().spec.matchConditions).toEqual([
        {
          name: expect.any(String),
          expression: `request.userInfo.username == 'system:serviceaccount:${RUNNER.namespace}:${RUNNER.name}'`,
        },
      ]);
      expect(policy().spec.failurePolicy).toBe('Fail');
      const bindings = objectsOfKind(result.objects, 'ValidatingAdmissionPolicyBinding');
      expect(bindings.map((b) => [b.spec.policyName, b.spec.validationActions])).toEqual([
        [policy().metadata.name, ['Deny']],
      ]);
    });

    it('covers every kind the runner may write in any namespace, on create, update and delete', () => {
      const covered = (group: string, resource: string) =>
        policy().spec.matchConstraints.resourceRules.some(
          (rule: { apiGroups: string[]; resources: string[]; operations: string[] }) =>
            rule.apiGroups.includes(group) &&
            rule.resources.includes(resource) &&
            ['CREATE', 'UPDATE', 'DELETE'].every((op) => rule.operations.includes(op)),
        );
      const uncovered = rights().filter(
        (r) =>
          r.scope === '*' &&
          r.verbs.some((verb) => WRITE_VERBS.has(verb)) &&
          !covered(r.group, r.resource),
      );
      expect(uncovered.map(describeRight)).toEqual([]);
    });
  });

  it('makes the builds’ namespace with the labels the runner applies to it', () => {
    const buildNamespace = runnerEnv().KUBE_BUILD_NAMESPACE!;
    const [applied] = tenancy.buildNamespaceObjects({ ...sampleRunnerSettings, buildNamespace });
    expect(findObject(result.objects, 'Namespace', buildNamespace).metadata.labels).toEqual(
      applied!.metadata.labels,
    );
  });
});
