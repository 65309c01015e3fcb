import { promises as dns } from 'node:dns';
import { classifyAddress, type AddressClass } from './address-policy';

/** Resolves a host name to every address it has (`dns.lookup` with `all`, as sockets do). */
export type LookupHost = (hostname: string) => Promise<{ address: string }[]>;

export const systemLookupHost: LookupHost = (hostname) =>
  dns.lookup(hostname, { all: true, verbatim: true });

/**
 * The first address of `hostname` (an IP literal, bracketed or not, or a name) that is not
 * public, with its class; null when every address is public. A name that does not resolve is
 * null too: the check where the connection is made still applies (see the fetch's own guard).
 */
export async function nonPublicAddressOf(
  hostname: string,
  lookupHost: LookupHost = systemLookupHost,
): Promise<{ address: string; kind: AddressClass } | null> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = classifyAddress(host);
  if (literal !== null) return literal === 'public' ? null : { address: host, kind: literal };
  let addresses: { address: string }[];
  try {
    addresses = await lookupHost(host);
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const kind = classifyAddress(address) ?? 'reserved';
    if (kind !== 'public') return { address, kind };
  }
  return null;
}
