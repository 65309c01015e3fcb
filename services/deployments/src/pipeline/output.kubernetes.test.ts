import { useKubernetesHarness } from '../test/kubernetes-harness';
import { outputLimits } from '../test/output-limits';

/**
 * What a build prints cannot stop the platform on the Kubernetes runner (issue 21's "Output",
 * output.test.ts for the local runtime): a build Job printing one endless line or a flood of
 * lines ends DEPLOYED, the deployments service (this process) holding none of it, its log within
 * LOG_LIMIT_BYTES and every line within LOG_LINE_MAX_BYTES. The output comes from the pod's log
 * through the API server (build-log.ts), each line its own piece of the transport, and a flood
 * past the kubelet's log rotation (10 MiB) ends the follow: its end is read by the next.
 */
const LINE_MAX = 4096;
const { h } = useKubernetesHarness({ LOG_LINE_MAX_BYTES: String(LINE_MAX) });

/** A build Job, an image pull and a rollout, with that much printed first. */
const WAIT = 300_000;
const SLOW = 2 * WAIT;

const { deployPrinting, expectWithinLimits } = outputLimits(h, {
  lineMaxBytes: LINE_MAX,
  waitMs: WAIT,
  live: true,
});

describe('what a build Job prints', () => {
  it(
    'a 400 MB line without a newline is cut with its whole length, the service holding none of it',
    async () => {
      const { service, id, logs, grewBy } = await deployPrinting(
        `head -c 400000000 /dev/zero | tr '\\0' a`,
      );

      // Cut, with the line's length as far as one follow had it (a rotation ends a follow).
      expect(logs).toMatch(/^a+ \[\.\.\. line cut: it was \d+ bytes long \.\.\.\]$/m);
      const cut = Number(/line cut: it was (\d+) bytes long/.exec(logs)![1]);
      expect(cut).toBeGreaterThan(1_000_000);
      expect(logs).toContain('built revision');
      expectWithinLimits(logs, grewBy);
      expect((await h.api.get(service, id)).status).toBe(200);
    },
    SLOW,
  );

  it(
    'a flood of two million lines: the log says how many it dropped, the service holding none of it',
    async () => {
      const { service, id, logs, grewBy } = await deployPrinting('seq 1 2000000');

      expect(logs).toMatch(
        /\[\.\.\. \d+ lines \(\d+ bytes\) of output dropped here: more came at once than the log keeps \.\.\.\]\n/,
      );
      expectWithinLimits(logs, grewBy);
      expect((await h.api.get(service, id)).status).toBe(200);
    },
    SLOW,
  );

  it(
    'keeps the end of a flood past the rotation of its log: its last line and what the build printed after it',
    async () => {
      const { logs } = await deployPrinting('seq 1 2000000');

      expect(logs).toContain('\n2000000\n');
      expect(logs).toContain('built revision');
    },
    SLOW,
  );
});
