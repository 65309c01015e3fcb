import { createHash } from 'node:crypto';
import { runProgram as run } from '@platform/shared';
import { NON_PUBLIC_IPV4_RANGES } from './non-public-ranges';
import { writeFile } from 'node:fs/promises';

/**
 * What a sandbox's traffic may reach, as nftables rules (README "The sandbox", Network): every
 * build and app has a network namespace of its own whose only way out is a veth pair
 * (`<prefix>N` on the host) routed and masqueraded by the host.
 * - To the host itself (any of its addresses, on any port): only the sandbox's own DNS forwarder,
 *   port 53 of the address on its own veth; replies to connections the host opened (the router
 *   reaching an app) pass.
 * - Through the host: IPv4 to public addresses only. `deny` lists the ranges that are not public
 *   (private, loopback, link-local, shared, multicast, reserved, documentation …); `allow`
 *   overrides it for ranges a machine must reach anyway (here the package registries resolve to
 *   a documentation range). No IPv6 at all, and no traffic between sandboxes.
 * - A packet whose source address is not the one routed to its veth is dropped (no spoofing).
 * - The host's own traffic to a sandbox address never leaves by another interface.
 */
export interface EgressPolicy {
  /** Host-side interface names start with it (`psb`). */
  interfacePrefix: string;
  /** The sandboxes' addresses (SANDBOX_NETWORK_CIDR): what is masqueraded. */
  sandboxCidr: string;
  /** IPv4 ranges sandboxes may never reach (SANDBOX_EGRESS_DENY). */
  deny: string[];
  /** IPv4 ranges reachable even though `deny` holds them (SANDBOX_EGRESS_ALLOW). */
  allow: string[];
}

/** The table of one policy: its name says which (`platform_sandbox_<hash of the policy>`). */
export function egressTable(policy: EgressPolicy): string {
  const hash = createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 12);
  return `platform_sandbox_${hash}`;
}

/** The one table of the first version, which matched every sandbox whatever its policy. */
const LEGACY_TABLE = 'platform_sandbox';

/** What a sandbox may never reach unless SANDBOX_EGRESS_ALLOW says otherwise. */
export const DEFAULT_EGRESS_DENY = NON_PUBLIC_IPV4_RANGES;

const set = (ranges: string[]) => (ranges.length ? `elements = { ${ranges.join(', ')} }` : '');

/**
 * The policy's table. It applies to the sandboxes whose host-side interface is in its `ifaces`
 * set (SandboxNetworks adds each one before it is used), so processes with other settings on the
 * same host keep their own rules: a sandbox is never under another's. A packet that meets a
 * reject in any table is rejected, so an interface left in a set by a crash only ever adds
 * restrictions to a later sandbox of that name.
 */
export function egressRuleset(policy: EgressPolicy): string {
  const iface = '@ifaces';
  const anySandbox = `"${policy.interfacePrefix}*"`;
  return `table inet ${egressTable(policy)} {
  set ifaces {
    type ifname
  }
  set deny4 {
    type ipv4_addr; flags interval; auto-merge
    ${set(policy.deny)}
  }
  set allow4 {
    type ipv4_addr; flags interval; auto-merge
    ${set(policy.allow)}
  }
  chain input {
    type filter hook input priority filter - 5; policy accept;
    iifname ${iface} ct state established,related accept
    iifname ${iface} meta nfproto ipv4 meta l4proto { udp, tcp } th dport 53 fib daddr . iif type local accept
    iifname ${iface} meta l4proto tcp reject with tcp reset
    iifname ${iface} reject with icmpx type admin-prohibited
  }
  chain forward {
    type filter hook forward priority filter - 5; policy accept;
    oifname ${iface} ct state established,related accept
    oifname ${iface} drop
    iifname ${iface} meta nfproto ipv6 reject with icmpx type admin-prohibited
    iifname ${iface} fib saddr . iif oif missing drop
    iifname ${iface} ip daddr @allow4 accept
    iifname ${iface} ip daddr @deny4 meta l4proto tcp reject with tcp reset
    iifname ${iface} ip daddr @deny4 reject with icmpx type admin-prohibited
    iifname ${iface} accept
  }
  chain output {
    type filter hook output priority filter - 5; policy accept;
    ip daddr ${policy.sandboxCidr} oifname != ${anySandbox} reject with icmpx type host-unreachable
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr ${policy.sandboxCidr} oifname != ${anySandbox} masquerade
  }
}
`;
}

/**
 * Makes the policy's table where it is missing (it is never replaced: its set holds the running
 * sandboxes of every process with this policy), removes the first version's table, and lets the
 * host route the sandboxes' traffic (`net.ipv4.ip_forward`). Needs root (CAP_NET_ADMIN).
 */
export async function installEgressRules(
  programs: { nft: string; ip: string },
  policy: EgressPolicy,
): Promise<void> {
  await run(programs.nft, ['delete', 'table', 'inet', LEGACY_TABLE]).catch(() => undefined);
  const exists = await run(programs.nft, ['list', 'table', 'inet', egressTable(policy)]).then(
    () => true,
    () => false,
  );
  // Two processes making it at once append the same rules twice: the same verdicts.
  if (!exists) await run(programs.nft, ['-f', '-'], egressRuleset(policy));
  // A sandbox's address that is not up (yet, or any more) is unreachable, never sent out.
  await run(programs.ip, ['route', 'replace', 'unreachable', policy.sandboxCidr], '');
  await writeFile('/proc/sys/net/ipv4/ip_forward', '1');
}

/** Puts a sandbox's interface under the policy's rules (before anything can use it). */
export function applyEgressRules(nft: string, policy: EgressPolicy, name: string): Promise<void> {
  return run(nft, ['add', 'element', 'inet', egressTable(policy), 'ifaces', `{ ${name} }`]);
}

/** Takes a sandbox's interface out of the policy's set once it is gone. */
export async function releaseEgressRules(
  nft: string,
  policy: EgressPolicy,
  name: string,
): Promise<void> {
  await run(nft, ['delete', 'element', 'inet', egressTable(policy), 'ifaces', `{ ${name} }`]).catch(
    () => undefined,
  );
}
