import type { ResolveHost } from '../egress/egress-guard';

/**
 * Name resolution without DNS traffic: each name answers from the table. A list of answers per
 * name is used in turn (the last one repeats), which is how a DNS rebinding looks.
 */
export function fakeDns(table: Record<string, string[] | string[][]>): ResolveHost {
  const calls = new Map<string, number>();
  return async (hostname) => {
    const entry = table[hostname];
    if (!entry)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const turns = (Array.isArray(entry[0]) ? entry : [entry]) as string[][];
    const call = calls.get(hostname) ?? 0;
    calls.set(hostname, call + 1);
    const addresses = turns[Math.min(call, turns.length - 1)]!;
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}
