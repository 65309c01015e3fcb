import net from 'node:net';
import type { K8sObject } from './checker';
import { NAMESPACE, selectorMatches } from './kubernetes';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered objects are plain JSON */

/**
 * Something that sends or receives traffic: a pod (ours or another namespace's) or an address
 * outside the cluster.
 */
export interface Endpoint {
  name: string;
  ip: string;
  /** Absent for addresses outside the cluster. */
  pod?: {
    namespace: string;
    namespaceLabels: Record<string, string>;
    labels: Record<string, string>;
    ports: { name?: string; containerPort: number; protocol?: string }[];
  };
}

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Is `ip` in `cidr`? IPv4 only; an IPv6 block never contains an IPv4 address. */
export function cidrContains(cidr: string, ip: string): boolean {
  const [base, bitsText] = cidr.split('/');
  if (!net.isIPv4(base!) || !net.isIPv4(ip)) return false;
  const bits = Number(bitsText ?? 32);
  const size = 2 ** (32 - bits);
  const start = Math.floor(ipv4ToInt(base!) / size) * size;
  const address = ipv4ToInt(ip);
  return address >= start && address < start + size;
}

/**
 * The NetworkPolicy semantics of https://kubernetes.io/docs/concepts/services-networking/network-policies/
 * over a set of endpoints. Policies only govern pods in their own namespace; a connection needs
 * the sender's egress and the receiver's ingress to allow it.
 */
export class NetworkModel {
  private readonly policies: K8sObject[];

  /**
   * `ignoreEgress`: judge the receivers' ingress policies alone, as if every sender's egress
   * were open, so that each side is checked to hold on its own; `ignoreIngress` the senders'
   * egress alone.
   */
  constructor(
    policies: K8sObject[],
    private readonly options: { ignoreEgress?: boolean; ignoreIngress?: boolean } = {},
  ) {
    this.policies = policies.filter((p) => p.kind === 'NetworkPolicy');
  }

  canConnect(from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
    return (
      (this.options.ignoreEgress || this.allows('Egress', from, to, to, port, protocol)) &&
      (this.options.ignoreIngress || this.allows('Ingress', to, from, to, port, protocol))
    );
  }

  /** Does the policy set let `subject` exchange traffic with `peer` in `direction`? */
  private allows(
    direction: 'Ingress' | 'Egress',
    subject: Endpoint,
    peer: Endpoint,
    destination: Endpoint,
    port: number,
    protocol: Protocol,
  ): boolean {
    if (!subject.pod) return true; // not a pod: no policy applies to it
    const selecting = this.policies.filter(
      (policy) =>
        (policy.metadata.namespace ?? NAMESPACE) === subject.pod!.namespace &&
        selectorMatches(policy.spec.podSelector, subject.pod!.labels) &&
        policyTypes(policy).includes(direction),
    );
    if (selecting.length === 0) return true; // not isolated in this direction
    const rulesKey = direction === 'Ingress' ? 'ingress' : 'egress';
    const peersKey = direction === 'Ingress' ? 'from' : 'to';
    return selecting.some((policy) =>
      (policy.spec[rulesKey] ?? []).some(
        (rule: any) =>
          peersMatch(rule[peersKey], peer, policy.metadata.namespace ?? NAMESPACE) &&
          portsMatch(rule.ports, destination, port, protocol),
      ),
    );
  }
}

/** policyTypes as the API server defaults it: Ingress always, Egress if there are egress rules. */
function policyTypes(policy: K8sObject): string[] {
  if (policy.spec.policyTypes?.length) return policy.spec.policyTypes;
  return policy.spec.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

function peersMatch(peers: any[] | undefined, peer: Endpoint, policyNamespace: string): boolean {
  if (!peers || peers.length === 0) return true; // no from/to: every peer
  return peers.some((p) => {
    if (p.ipBlock) {
      // Implementations differ on pod IPs in ipBlocks; counting them is the cautious choice.
      return (
        cidrContains(p.ipBlock.cidr, peer.ip) &&
        !(p.ipBlock.except ?? []).some((cidr: string) => cidrContains(cidr, peer.ip))
      );
    }
    if (!peer.pod) return false; // pod and namespace selectors select pods only
    if (p.namespaceSelector) {
      return (
        selectorMatches(p.namespaceSelector, peer.pod.namespaceLabels) &&
        (!p.podSelector || selectorMatches(p.podSelector, peer.pod.labels))
      );
    }
    return (
      peer.pod.namespace === policyNamespace && selectorMatches(p.podSelector, peer.pod.labels)
    );
  });
}

function portsMatch(
  ports: any[] | undefined,
  destination: Endpoint,
  port: number,
  protocol: Protocol,
): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'number') {
      return p.endPort ? port >= p.port && port <= p.endPort : port === p.port;
    }
    // A named port means the destination pod's container port of that name.
    return (destination.pod?.ports ?? []).some(
      (cp) =>
        cp.name === p.port && cp.containerPort === port && (cp.protocol ?? 'TCP') === protocol,
    );
  });
}

/** The pods the rendered Deployments create, with made-up pod IPs in 10.244.0.0/16. */
export function podsOf(objects: K8sObject[]): Endpoint[] {
  const namespaceLabels = (name: string) => ({
    ...(objects.find((o) => o.kind === 'Namespace' && o.metadata.name === name)?.metadata.labels ??
      {}),
    'kubernetes.io/metadata.name': name,
  });
  return objects
    .filter((o) => o.kind === 'Deployment')
    .map((deployment, i) => {
      const namespace = deployment.metadata.namespace ?? NAMESPACE;
      return {
        name: deployment.metadata.name,
        ip: `10.244.${i + 1}.10`,
        pod: {
          namespace,
          namespaceLabels: namespaceLabels(namespace),
          labels: deployment.spec.template.metadata?.labels ?? {},
          ports: deployment.spec.template.spec.containers.flatMap((c: any) => c.ports ?? []),
        },
      };
    });
}

/** A pod somewhere else in the cluster. */
export function outsidePod(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  ports: { name?: string; containerPort: number; protocol?: string }[] = [],
  ip = '10.244.200.10',
): Endpoint {
  return {
    name,
    ip,
    pod: {
      namespace,
      namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
      labels,
      ports,
    },
  };
}

/** An address outside the cluster. */
export function host(name: string, ip: string): Endpoint {
  return { name, ip };
}
