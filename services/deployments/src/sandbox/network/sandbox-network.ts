import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { ProgramError, runProgram as run } from '@platform/shared';
import { AddressPool, type SandboxAddresses } from './address-pool';
import { startDnsForwarder, type DnsForwarder } from './dns-forwarder';
import { applyEgressRules, releaseEgressRules, type EgressPolicy } from './egress-rules';

/** The programs and settings the networks are made with. */
export interface NetworkSettings {
  /** `ip` (iproute2) and `nsenter` (util-linux), absolute paths. */
  ip: string;
  nsenter: string;
  /** SANDBOX_NETWORK_CIDR. */
  cidr: string;
  /** Host-side interface names: `<prefix><index>`, the prefix the egress rules match. */
  interfacePrefix: string;
  /** Where the sandboxes' forwarders ask (the host's resolver). */
  dnsUpstream: string;
  /** `nft`, and the policy whose rules each sandbox's interface is put under. */
  nft: string;
  egress: EgressPolicy;
}

/**
 * One sandbox's network: a veth pair whose host end (`psbN`) holds `addresses.host` and the
 * sandbox's DNS forwarder, and whose other end goes into the sandbox's own network namespace
 * (`eth0`, `addresses.sandbox`, default route via the host end). The egress rules decide what
 * it reaches. The pair goes with the namespace; close() removes what is left.
 */
export interface SandboxNetwork {
  addresses: SandboxAddresses;
  interfaceName: string;
  /** The sandbox's /etc/resolv.conf: its forwarder. */
  resolvConf: string;
  /** Moves the sandbox end into the network namespace of `pid` and configures it. */
  enter(pid: number): Promise<void>;
  close(): Promise<void>;
}

/** Makes sandbox networks; each takes a free /30 of the range, across processes. */
export class SandboxNetworks {
  private readonly pool: AddressPool;

  constructor(private readonly settings: NetworkSettings) {
    this.pool = new AddressPool(settings.cidr);
  }

  /**
   * A new pair with its host end up and its forwarder listening. The kernel's refusal of a
   * second interface of the same name is what makes a /30 one sandbox's across every process of
   * the platform on this host: a taken one is skipped.
   */
  async create(): Promise<SandboxNetwork> {
    const start = randomInt(this.pool.size);
    for (let i = 0; i < this.pool.size; i++) {
      const addresses = this.pool.addresses((start + i) % this.pool.size);
      const name = `${this.settings.interfacePrefix}${addresses.index}`;
      try {
        await run(this.settings.ip, ['-batch', '-'], this.hostSide(name, addresses));
      } catch (err) {
        if (err instanceof ProgramError && /File exists/.test(err.stderr)) continue;
        throw err;
      }
      return this.configured(name, addresses).catch(async (err: unknown) => {
        await run(this.settings.ip, ['link', 'del', name]).catch(() => undefined);
        await releaseEgressRules(this.settings.nft, this.settings.egress, name);
        throw err;
      });
    }
    throw new Error(`every sandbox network of ${this.settings.cidr} is in use`);
  }

  private hostSide(name: string, a: SandboxAddresses): string {
    return [
      `link add ${name} type veth peer name ${name}s`,
      `addr add ${a.host}/${a.prefixLength} dev ${name}`,
      `link set ${name} up`,
      '',
    ].join('\n');
  }

  private async configured(name: string, addresses: SandboxAddresses): Promise<SandboxNetwork> {
    const { ip, nsenter, dnsUpstream, nft, egress } = this.settings;
    // Under its policy's rules before the sandbox has its end of the pair.
    await applyEgressRules(nft, egress, name);
    // No IPv6 on the host end: the sandbox has no IPv6 way out, not even link-local to the host.
    await writeFile(`/proc/sys/net/ipv6/conf/${name}/disable_ipv6`, '1').catch(() => undefined);
    const forwarder: DnsForwarder = await startDnsForwarder(addresses.host, dnsUpstream);
    return {
      addresses,
      interfaceName: name,
      resolvConf: `nameserver ${addresses.host}\noptions timeout:2 attempts:3\n`,
      async enter(pid: number) {
        await run(ip, ['link', 'set', `${name}s`, 'netns', String(pid)]);
        await run(
          nsenter,
          [`--target=${pid}`, '--net', '--', ip, '-batch', '-'],
          [
            `link set ${name}s name eth0`,
            `addr add ${addresses.sandbox}/${addresses.prefixLength} dev eth0`,
            'link set eth0 up',
            'link set lo up',
            `route add default via ${addresses.host}`,
            '',
          ].join('\n'),
        );
      },
      async close() {
        await forwarder.close();
        // Gone with the sandbox's namespace already, unless the sandbox never got its end.
        await run(ip, ['link', 'del', name]).catch(() => undefined);
        await releaseEgressRules(nft, egress, name);
      },
    };
  }
}
