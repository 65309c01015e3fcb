import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { classifyAddress, type AddressClass } from '@platform/shared';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has; injectable so tests never use real DNS. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolveHost: ResolveHost = (hostname) =>
  dns.lookup(hostname, { all: true, verbatim: true });

/** A destination webhooks may not reach; its message is safe to show to the webhook's owner. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(readonly addressClass: AddressClass) {
    super(`refused: the destination is a ${addressClass} address, which webhooks may not reach`);
    this.name = 'EgressRefusedError';
  }
}

const stripBrackets = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

export interface EgressGuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE: lets deliveries reach loopback and private networks (local stack). */
  allowPrivate: boolean;
  resolveHost?: ResolveHost;
}

/**
 * The SSRF guard. At registration it gives early feedback; at dial time it is the real
 * defence: the address checked is the very one the socket connects to, resolved by our own
 * `lookup`, so a DNS answer that changes after registration cannot reach inside.
 */
export class EgressGuard {
  private readonly resolveHost: ResolveHost;

  constructor(private readonly options: EgressGuardOptions) {
    this.resolveHost = options.resolveHost ?? systemResolveHost;
  }

  /** Throws EgressRefusedError when `address` (an IP) may not be dialled. */
  assertAddressAllowed(address: string): void {
    if (this.options.allowPrivate) return;
    const kind = classifyAddress(address) ?? 'reserved';
    if (kind !== 'public') throw new EgressRefusedError(kind);
  }

  /**
   * Registration-time check of a URL (already parsed by WHATWG rules, so `2130706433` and
   * `0x7f000001` arrive here as `127.0.0.1`). A name that does not resolve is let through:
   * the dial-time check still applies.
   */
  async assertUrlAllowed(url: URL): Promise<void> {
    if (this.options.allowPrivate) return;
    const host = stripBrackets(url.hostname);
    if (classifyAddress(host) !== null) {
      this.assertAddressAllowed(host);
      return;
    }
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolveHost(host);
    } catch {
      return;
    }
    for (const { address } of addresses) this.assertAddressAllowed(address);
  }

  /**
   * Options for http(s).request: the IP-literal host is checked here (node does not call
   * `lookup` for literals), a name is resolved and checked inside `lookup`, before any socket
   * connects. Every resolved address must be allowed, so no fallback address can slip through.
   */
  dialOptions(url: URL): { lookup: LookupFunction } {
    const host = stripBrackets(url.hostname);
    if (classifyAddress(host) !== null) this.assertAddressAllowed(host);
    const lookup: LookupFunction = (hostname, options, callback) => {
      this.resolveAllowed(hostname).then(
        (addresses) => {
          const family = options.family === 4 || options.family === 6 ? options.family : 0;
          const wanted = family ? addresses.filter((a) => a.family === family) : addresses;
          const first = wanted[0];
          if (!first) {
            const err = Object.assign(new Error(`no address found for ${hostname}`), {
              code: 'ENOTFOUND',
            });
            callback(err, '');
          } else if (options.all) {
            callback(null, wanted);
          } else {
            callback(null, first.address, first.family);
          }
        },
        (err: NodeJS.ErrnoException) => callback(err, ''),
      );
    };
    return { lookup };
  }

  private async resolveAllowed(hostname: string): Promise<ResolvedAddress[]> {
    const addresses = await this.resolveHost(hostname);
    for (const { address } of addresses) this.assertAddressAllowed(address);
    return addresses;
  }
}
