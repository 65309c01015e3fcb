import { isIP } from 'node:net';

/**
 * What kind of destination an IP address is. Only `public` addresses may be dialled on a tenant's
 * behalf (webhook deliveries unless WEBHOOK_ALLOW_PRIVATE=true, service repositories unless
 * SOURCE_ALLOW_LOCAL=true): everything else reaches into our own network.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

type Ipv4Range = [base: string, prefixLength: number, kind: AddressClass];

const IPV4_RANGES: Ipv4Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['224.0.0.0', 4, 'multicast'],
  // Future use and the limited broadcast address: never a legitimate receiver.
  ['240.0.0.0', 4, 'reserved'],
];

function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value;
}

function inIpv4Range(value: number, base: string, prefixLength: number): boolean {
  const size = 2 ** (32 - prefixLength);
  return Math.floor(value / size) === Math.floor(parseIpv4(base)! / size);
}

function classifyIpv4(value: number): AddressClass {
  const range = IPV4_RANGES.find(([base, prefix]) => inIpv4Range(value, base, prefix));
  return range ? range[2] : 'public';
}

/** The eight 16-bit groups of an IPv6 address, or null when `text` is not one. */
function parseIpv6(text: string): number[] | null {
  let address = text.replace(/%.*$/, '');
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (v4 === null) return null;
    address = `${address.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

function classifyIpv6(g: number[]): AddressClass {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embeddedV4 = () => g[6]! * 0x10000 + g[7]!;
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
  // addresses lead to the IPv4 address inside them.
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyIpv4(embeddedV4());
  if (zeroUpTo(6)) return classifyIpv4(embeddedV4());
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return classifyIpv4(embeddedV4());
  }
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return 'private';
  if ((first & 0xffc0) === 0xfe80) return 'link-local';
  if ((first & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((first & 0xff00) === 0xff00) return 'multicast';
  return 'public';
}

/** Classifies an IP address as dialled (dotted IPv4 or IPv6); null when `address` is not an IP. */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const version = isIP(bare.replace(/%.*$/, ''));
  if (version === 4) return classifyIpv4(parseIpv4(bare)!);
  if (version === 6) {
    const groups = parseIpv6(bare);
    return groups ? classifyIpv6(groups) : null;
  }
  return null;
}
