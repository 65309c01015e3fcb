import { useKubernetesHarness } from '../test/kubernetes-harness';

/**
 * A build Job's disk is limited (contracts.md: "exceeding one ends that build … with a log line
 * naming the limit, never the platform"): BUILD_DISK_BYTES is the build container's ephemeral
 * storage, and the kubelet evicts a pod that writes past it, which ends the build FAILED.
 */
const DISK = 64 * 1024 ** 2;
const { h } = useKubernetesHarness({ BUILD_DISK_BYTES: String(DISK) });

/** A build Job, the kubelet's next look at its disk (every 10 s), then the verdict. */
const WAIT = 300_000;

describe('what a build Job writes', () => {
  it(
    'past its disk limit: the build is stopped, FAILED, and the log names the limit',
    async () => {
      // Three times the limit, then as long as it takes the kubelet to notice.
      const { service, id } = await h.newDeployment(
        {},
        { buildCommand: 'head -c 200000000 /dev/zero > big && echo written && sleep 240' },
      );

      const ended = await h.waitForStatus(service, id, 'FAILED', WAIT);

      expect(ended.logs).toContain('written');
      expect(ended.logs).toMatch(/the build's disk limit \(BUILD_DISK_BYTES\)/);
      expect(ended.logs).toMatch(/ephemeral local storage/i);
    },
    2 * WAIT,
  );

  it(
    'within it: the build goes on to DEPLOYED',
    async () => {
      const { service, id } = await h.newDeployment(
        {},
        { buildCommand: 'head -c 20000000 /dev/zero > fits && rm fits && node build.js' },
      );

      await h.waitForStatus(service, id, 'DEPLOYED', WAIT);
    },
    2 * WAIT,
  );
});
