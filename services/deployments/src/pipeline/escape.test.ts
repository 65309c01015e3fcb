import { connect } from 'node:net';
import { useHarness } from '../test/harness';
import { RuntimeClient } from '../runtime/local/client';
import { hostAddresses, listeningPorts, startTestHosts, type TestHosts } from '../test/test-hosts';

/**
 * The escape suite: tenants' code, run as real builds and apps through the pipeline, tries every
 * way in it has: each port this machine listens on, at loopback and at the host's own addresses;
 * private, shared, link-local and metadata addresses (test hosts this suite makes, reachable from
 * the host); IPv4-mapped IPv6 forms; another app's address, to connect to and to bind. Each probe
 * must fail. README "The sandbox" says how each is enforced; docs/threat-model.md lists them all.
 */
const PROBE = `
const net = require('net');
const dns = require('dns');
const targets = JSON.parse(process.env.PROBE_TARGETS || '[]');
const probe = (target) => new Promise((resolve) => {
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at).replace(/^\\[|\\]$/g, '');
  const socket = net.connect({ host, port: Number(target.slice(at + 1)), timeout: 3000 });
  const done = (result) => { socket.destroy(); resolve('probe ' + target + ' ' + result); };
  socket.once('connect', () => done('CONNECTED'));
  socket.once('timeout', () => done('timeout'));
  socket.once('error', (e) => done(e.code || e.message));
});
const bind = (address) => new Promise((resolve) => {
  const server = net.createServer();
  server.once('error', (e) => resolve('bind ' + address + ' ' + e.code));
  server.listen(8080, address, () => { server.close(); resolve('bind ' + address + ' BOUND'); });
});
(async () => {
  for (const line of await Promise.all(targets.map(probe))) console.log(line);
  if (process.env.PROBE_BIND) console.log(await bind(process.env.PROBE_BIND));
  for (const file of JSON.parse(process.env.PROBE_FILES || '[]')) {
    let result;
    try { result = 'READ ' + require('fs').readdirSync(file).length; } catch (e) { result = e.code; }
    console.log('file ' + file + ' ' + result);
  }
  const found = await dns.promises.lookup('registry.npmjs.org').then((a) => a.address, (e) => e.code);
  console.log('dns registry.npmjs.org ' + found);
  console.log('probes done');
})();
`;

const SLOW = 60_000;
const h = useHarness({ pipeline: {} });
let hosts: TestHosts;
beforeAll(async () => {
  hosts = await startTestHosts();
});
afterAll(() => hosts?.close());

/** What the host itself reaches of a test host: the control that makes a refusal mean something. */
function answerOf(address: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host: address, port, timeout: 5_000 });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.once('end', () => resolve(text.trim()));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.once('timeout', () => resolve('timeout'));
  });
}

function everyWayIn(): string[] {
  const ports = listeningPorts();
  const onHost = hostAddresses().flatMap((address) => ports.map((port) => `${address}:${port}`));
  const onLoopbackV6 = ports.map((port) => `[::1]:${port}`);
  const testHosts = hosts.addresses.flatMap((address) => [
    `${address}:${hosts.port}`,
    `[::ffff:${address}]:${hosts.port}`,
  ]);
  return [...onHost, ...onLoopbackV6, ...testHosts];
}

/** The probe's lines of a log, by target. */
function probesIn(logs: string): Map<string, string> {
  const results = new Map<string, string>();
  for (const match of logs.matchAll(/^probe (\S+) (\S+)$/gm)) results.set(match[1]!, match[2]!);
  return results;
}

async function withProbe() {
  return h.appRepository.commit({ files: { 'probe.js': PROBE } });
}

describe('escaping the sandbox', () => {
  it('the host reaches every test host (so a refusal below is the boundary, not a missing host)', async () => {
    for (const address of hosts.addresses) {
      expect(await answerOf(address, hosts.port)).toBe(`target ${address}`);
    }
  });

  it(
    'a build reaches no port of this machine, and no private, shared, link-local or metadata address; DNS works',
    async () => {
      const targets = everyWayIn();
      const commit = await withProbe();
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node probe.js && node build.js',
          variables: [{ name: 'PROBE_TARGETS', value: JSON.stringify(targets) }],
        },
      );

      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

      expect(deployed.logs).toContain('probes done');
      const results = probesIn(deployed.logs);
      expect([...results.keys()].sort()).toEqual([...targets].sort());
      expect([...results].filter(([, result]) => result === 'CONNECTED')).toEqual([]);
      expect(deployed.logs).toMatch(/^dns registry\.npmjs\.org \d+\.\d+\.\d+\.\d+$/m);
    },
    SLOW + 10_000,
  );

  it(
    'a build reads no other build, and nothing of the host outside what it is given',
    async () => {
      const first = await h.newDeployment();
      await h.waitForStatus(first.service, first.id, 'DEPLOYED', SLOW);
      const others = [h.config.BUILDS_DIR, h.config.RUNTIME_DIR, '/root', '/work', '/home', '/var'];
      const commit = await withProbe();
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node probe.js && node build.js',
          variables: [{ name: 'PROBE_FILES', value: JSON.stringify(others) }],
        },
      );

      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

      const results = [...logs.matchAll(/^file (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
      expect(results).toEqual(others.map((file) => [file, 'ENOENT']));
    },
    2 * SLOW,
  );

  it(
    'an app reaches none of them either, nor another app, and cannot take its address',
    async () => {
      const first = await h.newDeployment();
      await h.waitForStatus(first.service, first.id, 'DEPLOYED', SLOW);
      const runtime = new RuntimeClient(h.config.RUNTIME_DIR);
      const other = (await runtime.list()).find((r) => r.serviceId === first.service.serviceId)!;
      const targets = [...everyWayIn(), `${other.host}:${other.port}`];
      const commit = await withProbe();

      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          startCommand: 'node probe.js && node server.js',
          variables: [
            { name: 'PROBE_TARGETS', value: JSON.stringify(targets) },
            { name: 'PROBE_BIND', value: other.host },
          ],
        },
      );
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);
      const logs = (await h.waitForLogs(service, id, 'probes done')).logs;

      expect(deployed.status).toBe('DEPLOYED');
      const results = probesIn(logs);
      expect([...results.keys()].sort()).toEqual([...targets].sort());
      expect([...results].filter(([, result]) => result === 'CONNECTED')).toEqual([]);
      expect(logs).toContain(`bind ${other.host} EADDRNOTAVAIL`);
      // The other app still serves its own visitors.
      expect((await h.app(first.service)).status).toBe(200);
    },
    2 * SLOW + 10_000,
  );
});

describe('exhausting what a sandbox is given', () => {
  const MiB = 1024 ** 2;
  const small = useHarness({
    pipeline: {
      BUILD_DISK_BYTES: String(64 * MiB),
      RUNTIME_APP_MEMORY_BYTES: String(256 * MiB),
    },
  });
  const DISK_FULL =
    'The build filled its disk: its workspace and /tmp hold 64 MiB at most (BUILD_DISK_BYTES).';

  it.each([
    ['its workspace', 'head -c 200000000 /dev/zero > big'],
    ['its /tmp', 'head -c 200000000 /dev/zero > /tmp/big'],
  ])(
    'a build that fills %s fails, and its log says so',
    async (_, fill) => {
      const { service, id } = await small.newDeployment({}, { buildCommand: fill });

      const failed = await small.waitForStatus(service, id, 'FAILED', SLOW);

      expect(failed.logs).toContain('No space left on device');
      expect(failed.logs.trimEnd().split('\n').pop()).toBe(DISK_FULL);
    },
    SLOW + 10_000,
  );

  it(
    'an app that allocates past its memory is ended, its log names the limit, and the platform goes on',
    async () => {
      const greedy =
        "exec node -e \"require('http').createServer((q, r) => r.end('ok')).listen(process.env.PORT, () => " +
        'setTimeout(() => { const kept = []; for (;;) kept.push(Buffer.alloc(64 << 20, 1)); }, 500))"';
      const { service, id } = await small.newDeployment({}, { startCommand: greedy });
      await small.waitForStatus(service, id, 'DEPLOYED', SLOW);

      const { logs } = await small.waitForLogs(
        service,
        id,
        'exited with signal SIGKILL: it went past its memory limit (256 MiB, RUNTIME_APP_MEMORY_BYTES)',
        SLOW,
      );

      expect(logs).toContain('==> restarting in');
      expect((await small.api.get(service, id)).status).toBe(200);
    },
    2 * SLOW + 10_000,
  );
});
