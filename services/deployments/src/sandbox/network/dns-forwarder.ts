import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';

/** A DNS message header is 12 bytes; a query names one question (RFC 1035 §4.1.1). */
const HEADER_BYTES = 12;
/** Past this, a UDP answer does not come and the sandbox's resolver asks again. */
const UPSTREAM_TIMEOUT_MS = 5_000;
/** A TCP exchange (a long answer) that takes longer is cut. */
const TCP_IDLE_MS = 10_000;
const TCP_MAX_BYTES = 256 * 1024;
/** Queries one sandbox may have waiting for the upstream resolver at once. */
const MAX_PENDING = 64;

/** Whether `message` is a standard query with one question: nothing else is relayed. */
export function isDnsQuery(message: Buffer): boolean {
  if (message.length < HEADER_BYTES + 5 || message.length > 4096) return false;
  const flags = message.readUInt16BE(2);
  const isResponse = (flags & 0x8000) !== 0;
  const opcode = (flags >> 11) & 0xf;
  return !isResponse && opcode === 0 && message.readUInt16BE(4) === 1;
}

/** The first `nameserver` of a resolv.conf: where the host resolves names. */
export function hostResolver(resolvConf = '/etc/resolv.conf'): string {
  const text = readFileSync(resolvConf, 'utf8');
  const match = /^\s*nameserver\s+(\S+)/m.exec(text);
  if (!match) throw new Error(`${resolvConf} names no nameserver`);
  return match[1]!;
}

export interface DnsForwarder {
  close(): Promise<void>;
}

/**
 * The sandbox's own resolver: listens on the host end of its network (`address`:53, UDP and
 * TCP) and asks `upstream` on its behalf. The sandbox's resolv.conf names `address`, so its code
 * resolves names without being able to reach the host's resolver (a private address) itself.
 * Only standard queries are relayed; everything else is dropped.
 */
export async function startDnsForwarder(address: string, upstream: string): Promise<DnsForwarder> {
  const udp = createSocket('udp4');
  let pending = 0;
  udp.on('message', (query, from) => {
    if (!isDnsQuery(query) || pending >= MAX_PENDING) return;
    pending++;
    const out = createSocket(upstream.includes(':') ? 'udp6' : 'udp4');
    const done = () => {
      clearTimeout(timer);
      out.close();
      pending--;
    };
    const timer = setTimeout(done, UPSTREAM_TIMEOUT_MS);
    out.on('error', done);
    out.once('message', (answer) => {
      udp.send(answer, from.port, from.address, () => undefined);
      done();
    });
    out.send(query, 53, upstream, (err) => err && done());
  });
  udp.on('error', () => undefined);

  const connections = new Set<{ destroy(): void }>();
  const tcp: Server = createServer((client) => {
    const server = connect({ host: upstream, port: 53 });
    let relayed = 0;
    const end = () => {
      client.destroy();
      server.destroy();
      connections.delete(client);
    };
    connections.add(client);
    client.setTimeout(TCP_IDLE_MS, end);
    client.on('data', (chunk: Buffer) => {
      relayed += chunk.length;
      if (relayed > TCP_MAX_BYTES) return end();
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  });
  tcp.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(53, address, () => {
      udp.off('error', reject);
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(53, address, () => {
      tcp.off('error', reject);
      resolve();
    });
  }).catch((err) => {
    udp.close();
    throw err;
  });

  return {
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const connection of connections) connection.destroy();
      await closed;
    },
  };
}
