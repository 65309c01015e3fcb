import type { K8sObject } from './checker';

/** A ServiceAccount, as RBAC names it. */
export interface Account {
  namespace: string;
  name: string;
}

/** One rule as it applies: where (`*`: every namespace), the API group, the resource, verbs. */
export interface Right {
  scope: string;
  group: string;
  resource: string;
  verbs: string[];
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

const names = (account: Account) => (subject: { kind: string; name: string; namespace?: string }) =>
  subject.kind === 'ServiceAccount' &&
  subject.name === account.name &&
  subject.namespace === account.namespace;

/** The bindings among `objects` that name `account`. */
export function bindingsOf(objects: K8sObject[], account: Account): K8sObject[] {
  return objects.filter(
    (o) =>
      (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') &&
      (o.subjects ?? []).some(names(account)),
  );
}

/**
 * What `account` may do under the roles and bindings among `objects`, one entry per group and
 * resource of each rule (a RoleBinding's rules hold in its namespace, a ClusterRoleBinding's
 * everywhere). A binding whose role is not among `objects` throws: it would grant nothing here.
 */
export function rightsOf(objects: K8sObject[], account: Account): Right[] {
  return bindingsOf(objects, account).flatMap((binding) => {
    const { kind, name } = binding.roleRef;
    const role = objects.find(
      (o) =>
        o.kind === kind &&
        o.metadata.name === name &&
        (kind === 'ClusterRole' || o.metadata.namespace === binding.metadata.namespace),
    );
    if (!role) throw new Error(`${binding.kind}/${binding.metadata.name}: no ${kind} ${name}`);
    const scope = binding.kind === 'RoleBinding' ? binding.metadata.namespace! : '*';
    return (role.rules as PolicyRule[]).flatMap((rule) => {
      if (rule.nonResourceURLs?.length || rule.resourceNames?.length) {
        throw new Error(`${kind}/${name}: a rule by URL or resource name; read it by hand`);
      }
      return (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).map((resource) => ({
          scope,
          group,
          resource,
          verbs: [...rule.verbs].sort(),
        })),
      );
    });
  });
}

/** `scope group/resource: verbs`, sorted: a right as the docs list it. */
export const describeRight = ({ scope, group, resource, verbs }: Right) =>
  `${scope} ${group ? `${group}/` : ''}${resource}: ${verbs.join(' ')}`;

/** Verbs that change something (what an admission policy can hold back; reads pass it by). */
export const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
