import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

/**
 * Addresses of the kinds no sandbox may reach, served by a TCP server in a network namespace this
 * suite makes itself: the host routes exactly these /32s into it, so no probe of them (the
 * host's or a sandbox's) ever leaves this machine.
 */
export const TEST_HOST_ADDRESSES = {
  private10: '10.123.45.1',
  private172: '172.16.45.1',
  private192: '192.168.45.1',
  linkLocalMetadata: '169.254.169.254',
  sharedCgnat: '100.64.45.1',
};

export interface TestHosts {
  addresses: string[];
  /** Each answers `target <address>` on port 80. */
  port: 80;
  close(): void;
}

const ip = (...args: string[]) => {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr}`);
};

/** Makes the namespace, its addresses, the host's routes to them and the server. */
export async function startTestHosts(): Promise<TestHosts> {
  const tag = `esc${process.pid % 100_000}`;
  const addresses = Object.values(TEST_HOST_ADDRESSES);
  ip('netns', 'add', tag);
  ip('link', 'add', `${tag}h`, 'type', 'veth', 'peer', 'name', `${tag}t`, 'netns', tag);
  ip('link', 'set', `${tag}h`, 'up');
  ip('-n', tag, 'link', 'set', `${tag}t`, 'up');
  ip('-n', tag, 'link', 'set', 'lo', 'up');
  for (const address of addresses) {
    ip('-n', tag, 'addr', 'add', `${address}/32`, 'dev', `${tag}t`);
    ip('route', 'add', `${address}/32`, 'dev', `${tag}h`);
  }
  ip('-n', tag, 'route', 'add', 'default', 'dev', `${tag}t`);
  const server = spawn(
    'ip',
    [
      'netns',
      'exec',
      tag,
      process.execPath,
      '-e',
      "require('net').createServer((s) => s.end('target ' + s.localAddress + '\\n')).listen(80, '0.0.0.0', () => console.log('up'))",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    server.stdout.once('data', () => resolve());
    server.once('exit', (code) => reject(new Error(`the test hosts' server exited with ${code}`)));
  });
  return {
    addresses,
    port: 80,
    close() {
      server.kill('SIGKILL');
      for (const address of addresses) spawnSync('ip', ['route', 'del', `${address}/32`]);
      spawnSync('ip', ['link', 'del', `${tag}h`]);
      spawnSync('ip', ['netns', 'del', tag]);
    },
  };
}

/** Every TCP port this machine listens on now (IPv4 and IPv6), from /proc/net. */
export function listeningPorts(): number[] {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') ports.add(parseInt(fields[1]!.split(':').pop()!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The host's own IPv4 addresses: loopback and every interface's (sandboxes' host ends excluded). */
export function hostAddresses(): string[] {
  return Object.entries(networkInterfaces())
    .filter(([name]) => !name.startsWith('psb'))
    .flatMap(([, entries]) => entries ?? [])
    .filter((entry) => entry.family === 'IPv4')
    .map((entry) => entry.address);
}
