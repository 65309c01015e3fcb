/** The addresses of one sandbox's network: a /30 of the sandboxes' range. */
export interface SandboxAddresses {
  /** The pair's number: the host-side interface is `<prefix><index>`. */
  index: number;
  /** The host end (the sandbox's gateway and DNS forwarder). */
  host: string;
  /** The sandbox end: where an app is reached. */
  sandbox: string;
  prefixLength: 30;
}

function parseIpv4(text: string): number {
  const parts = text.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${text}`);
  }
  return parts.reduce((value, part) => value * 256 + part, 0);
}

const formatIpv4 = (value: number) =>
  [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');

/** An IPv4 range in CIDR form, split into /30 blocks, one per sandbox. */
export class AddressPool {
  private readonly base: number;
  readonly size: number;

  constructor(readonly cidr: string) {
    const [address, bits] = cidr.split('/');
    const prefixLength = Number(bits);
    if (!address || !Number.isInteger(prefixLength) || prefixLength < 8 || prefixLength > 28) {
      throw new Error(`SANDBOX_NETWORK_CIDR must be an IPv4 range from /8 to /28, got ${cidr}`);
    }
    const blockSize = 2 ** (32 - prefixLength);
    this.base = Math.floor(parseIpv4(address) / blockSize) * blockSize;
    this.size = blockSize / 4;
  }

  addresses(index: number): SandboxAddresses {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) {
      throw new Error(`no sandbox network ${index} in ${this.cidr}`);
    }
    const block = this.base + index * 4;
    return { index, host: formatIpv4(block + 1), sandbox: formatIpv4(block + 2), prefixLength: 30 };
  }
}
