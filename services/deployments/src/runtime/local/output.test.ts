import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { useRunning } from '@platform/shared/testing';
import { MiB, watchMemory } from '../../test/memory';
import type { RuntimeClient } from './client';
import { startTestRuntime, testRelease } from './testing';

const LINE_MAX = 4096;
const LOG_MAX = 1 * MiB;
const SLOW = 120_000;
/** Far below what the apps print: the supervisor holds none of it for long. */
const MEMORY_BOUND = 96 * MiB;

/** Resident memory of a process (Linux). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

/** The whole release log as readLog gives it, read from the start until it has no more. */
async function readAll(client: RuntimeClient, releaseId: string): Promise<string> {
  let text = '';
  let offset = 0;
  for (;;) {
    const read = await client.readLog(releaseId, offset);
    if (read.nextOffset === offset && read.text === '') return text;
    text += read.text;
    offset = read.nextOffset;
  }
}

describe('what an app prints, in the local runtime', () => {
  const runtime = useRunning(() =>
    startTestRuntime({
      LOG_LINE_MAX_BYTES: String(LINE_MAX),
      RUNTIME_LOG_MAX_BYTES: String(LOG_MAX),
    }),
  );

  /** Starts an app that prints with `printer` first; its log, files and the supervisor's growth. */
  async function startPrinting(serviceId: string, printer: string) {
    const { client, runtimeDir } = runtime();
    const supervisorPid = await client.ping();
    const memory = watchMemory(() => rssOf(supervisorPid));
    const spec = testRelease(serviceId, 'v1', {
      command: `${printer}; echo; echo done-printing; exec node server.js`,
      healthTimeoutMs: 60_000,
    });

    const started = await client.start(spec);

    const grewBy = memory.stop();
    expect(started.state).toBe('ready');
    const logs = readdirSync(path.join(runtimeDir, 'logs')).filter((f) =>
      f.startsWith(spec.releaseId),
    );
    const onDisk = logs.reduce(
      (sum, f) => sum + statSync(path.join(runtimeDir, 'logs', f)).size,
      0,
    );
    const text = await readAll(client, spec.releaseId);
    await client.stopRelease(spec.releaseId);
    return { text, onDisk, grewBy };
  }

  function expectLinesWithinLimit(text: string) {
    const longest = Math.max(...text.split('\n').map((line) => Buffer.byteLength(line)));
    expect(longest).toBeLessThanOrEqual(LINE_MAX);
  }

  it(
    'cuts a 200 MB line without a newline, saying how long it was, in flat memory',
    async () => {
      const { text, onDisk, grewBy } = await startPrinting(
        'svc-endless-line',
        `head -c 200000000 /dev/zero | tr '\\0' a`,
      );

      expect(text).toMatch(/\na+ \[\.\.\. line cut: it was 200000000 bytes long \.\.\.\]\n/);
      expect(text).toContain('\ndone-printing\n');
      expectLinesWithinLimit(text);
      expect(onDisk).toBeLessThanOrEqual(LOG_MAX);
      expect(grewBy).toBeLessThan(MEMORY_BOUND);
    },
    SLOW,
  );

  it(
    'keeps binary output as text within the line limit',
    async () => {
      const { text } = await startPrinting(
        'svc-binary',
        `head -c 1000000 /dev/urandom | tr -d '\\n'`,
      );

      expect(text).toContain('\uFFFD');
      expect(text).toContain('\ndone-printing\n');
      expectLinesWithinLimit(text);
    },
    SLOW,
  );

  it(
    'keeps at most RUNTIME_LOG_MAX_BYTES of a flood on disk, the newest, saying what is gone',
    async () => {
      const { text, onDisk, grewBy } = await startPrinting(
        'svc-flood',
        `yes 'flood line' | head -n 5000000`,
      );

      expect(onDisk).toBeLessThanOrEqual(LOG_MAX);
      expect(text).toMatch(
        /^\[\.\.\. \d+ bytes of the app’s output are no longer kept: the log keeps the most recent \d+ \.\.\.\]\n/,
      );
      expect(text).toContain('flood line\n\ndone-printing\n');
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LOG_MAX + 1024);
      expect(grewBy).toBeLessThan(MEMORY_BOUND);
    },
    SLOW,
  );
});
