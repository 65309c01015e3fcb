import { useHarness } from '../test/harness';
import { RuntimeClient } from '../runtime/local/client';
import { startTestHosts, type TestHosts } from '../test/test-hosts';
import {
  answerOf,
  everyWayIn,
  expectHostFilesHidden,
  expectNoWayIn,
  probeVariables,
  withProbe,
} from '../test/escape-probes';

/**
 * The escape suite: tenants' code, run as real builds and apps through the pipeline, tries every
 * way in it has: each port this machine listens on, at loopback and at the host's own addresses;
 * private, shared, link-local and metadata addresses (test hosts this suite makes, reachable from
 * the host); IPv4-mapped IPv6 forms; another app's address, to connect to and to bind. Each probe
 * must fail. README "The sandbox" says how each is enforced; docs/threat-model.md lists them all.
 * The probes are the Kubernetes runner's too (test/escape-probes.ts, escape.kubernetes.test.ts).
 */
const SLOW = 60_000;
const h = useHarness({ pipeline: {} });
let hosts: TestHosts;
beforeAll(async () => {
  hosts = await startTestHosts();
});
afterAll(() => hosts?.close());

describe('escaping the sandbox', () => {
  it('the host reaches every test host (so a refusal below is the boundary, not a missing host)', async () => {
    for (const address of hosts.addresses) {
      expect(await answerOf(address, hosts.port)).toBe(`target ${address}`);
    }
  });

  it(
    'a build reaches no port of this machine, and no private, shared, link-local or metadata address; DNS works',
    async () => {
      const targets = everyWayIn(hosts);
      const commit = await withProbe(h.appRepository);
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        { buildCommand: 'node probe.js && node build.js', variables: probeVariables({ targets }) },
      );

      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

      expectNoWayIn(deployed.logs, targets);
    },
    SLOW + 10_000,
  );

  it(
    'a build reads no other build, and nothing of the host outside what it is given',
    async () => {
      const first = await h.newDeployment();
      await h.waitForStatus(first.service, first.id, 'DEPLOYED', SLOW);
      const others = [h.config.BUILDS_DIR, h.config.RUNTIME_DIR, '/root', '/work', '/home', '/var'];
      const commit = await withProbe(h.appRepository);
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node probe.js && node build.js',
          variables: probeVariables({ files: others }),
        },
      );

      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

      expectHostFilesHidden(logs, others);
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
      const targets = [...everyWayIn(hosts), `${other.host}:${other.port}`];
      const commit = await withProbe(h.appRepository);

      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          startCommand: 'node probe.js && node server.js',
          variables: probeVariables({ targets, bind: other.host }),
        },
      );
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);
      const logs = (await h.waitForLogs(service, id, 'probes done')).logs;

      expect(deployed.status).toBe('DEPLOYED');
      expectNoWayIn(logs, targets);
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
