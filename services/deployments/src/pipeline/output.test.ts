import { TRIMMED_MARKER } from '../deployments/log-store';
import { useHarness } from '../test/harness';
import { watchMemory } from '../test/memory';
import { outputLimits } from '../test/output-limits';
import { cutMarker } from './line-limit';

// The real pipeline (git, the sandbox, the runtime) in this process: the memory measured is the
// deployments service's own.
const LINE_MAX = 4096;
const h = useHarness({
  pipeline: { LOG_LINE_MAX_BYTES: String(LINE_MAX), RUNTIME_LOG_MAX_BYTES: String(1024 * 1024) },
});

/** How long each wait may take; a test, all of its waits. */
const WAIT = 60_000;
const SLOW = 3 * WAIT;
const { deployPrinting, expectWithinLimits } = outputLimits(h, {
  lineMaxBytes: LINE_MAX,
  waitMs: WAIT,
});

describe('what a build prints', () => {
  it(
    'cuts a 400 MB line without a newline, saying how long it was, in flat memory',
    async () => {
      const { logs, grewBy } = await deployPrinting(`head -c 400000000 /dev/zero | tr '\\0' a`);

      const cut = logs.split('\n').find((line) => line.startsWith('aaaa'));
      expect(cut).toMatch(/^a+ \[\.\.\. line cut: it was 400000000 bytes long \.\.\.\]$/);
      expect(cut!.endsWith(cutMarker(400_000_000))).toBe(true);
      expect(logs).toContain('built revision');
      expectWithinLimits(logs, grewBy);
    },
    SLOW,
  );

  it(
    'keeps binary output as text, within the limits',
    async () => {
      // Random bytes without a newline: one long line of what is mostly not UTF-8.
      const { logs, grewBy } = await deployPrinting(`head -c 1000000 /dev/urandom | tr -d '\\n'`);

      // Bytes that are no UTF-8 become U+FFFD.
      expect(logs).toContain('\uFFFD');
      expect(logs).toContain('built revision');
      expectWithinLimits(logs, grewBy);
    },
    SLOW,
  );

  it(
    'keeps the newest lines of a flood and says how many it dropped, in flat memory',
    async () => {
      // Two million lines as fast as seq prints them: far more than 100,000 a second.
      const { logs, grewBy } = await deployPrinting('seq 1 2000000');

      expect(logs).toMatch(
        /\[\.\.\. \d+ lines \(\d+ bytes\) of output dropped here: more came at once than the log keeps \.\.\.\]\n/,
      );
      expect(logs).toContain('\n2000000\n');
      expect(logs.startsWith(TRIMMED_MARKER)).toBe(true);
      expectWithinLimits(logs, grewBy);
    },
    SLOW,
  );
});

describe('what a deployed app prints', () => {
  /** Deploys an app that prints with `printer` before it listens; its log once all is copied. */
  async function deployAppPrinting(printer: string) {
    const { service, id } = await h.newDeployment(
      {},
      { startCommand: `${printer}; echo; echo done-printing; exec node server.js` },
    );
    const memory = watchMemory();
    await h.waitForStatus(service, id, 'DEPLOYED', WAIT);
    // What the app printed goes on into the log after DEPLOYED (LiveLogs).
    const { logs } = await h.waitForDeployment(
      service,
      id,
      'the app’s output copied',
      (d) => d.logs.includes('\ndone-printing\n'),
      WAIT,
    );
    return { logs: logs as string, grewBy: memory.stop() };
  }

  it(
    'cuts a 200 MB line without a newline, and goes on copying what follows it',
    async () => {
      const { logs, grewBy } = await deployAppPrinting(`head -c 200000000 /dev/zero | tr '\\0' a`);

      expect(logs).toMatch(/\na+ \[\.\.\. line cut: it was 200000000 bytes long \.\.\.\]\n/);
      expectWithinLimits(logs, grewBy);
    },
    SLOW,
  );

  it(
    'keeps the newest of a flood, within the limits',
    async () => {
      const { logs, grewBy } = await deployAppPrinting(`yes 'flood line' | head -n 3000000`);

      expect(logs).toContain('flood line\n\ndone-printing\n');
      expectWithinLimits(logs, grewBy);
    },
    SLOW,
  );
});
