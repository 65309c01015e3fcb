import { buildStepOf } from '../test/escape-probes';
import { useKubernetesHarness } from '../test/kubernetes-harness';

/**
 * A build's or an app's processes are limited on Kubernetes too (contracts.md: "CPU, memory,
 * process and time limits"): a pod has no process limit of its own in the API, so it is the
 * node's `podPidsLimit` (the kubelet's setting; 512 on the local cluster, as BUILD_PROCESSES and
 * RUNTIME_APP_PROCESSES are for the local runtime). What a fork bomb would take from the node
 * (its pids, and with them the kubelet's and every other pod's) ends at the pod's limit.
 */
// Room for every process asked for (each costs the pod's memory): only the process limit may stop them.
const ROOM = String(1024 ** 3);
const k = useKubernetesHarness({ BUILD_MEMORY_BYTES: ROOM, RUNTIME_APP_MEMORY_BYTES: ROOM });
const { h } = k;

/** A build Job or a rollout on a loaded machine. */
const ROLLOUT = 240_000;
/** Far more than one pod may have; without a limit, every one of them starts. */
const ASKED = 1_200;
/** The local cluster's podPidsLimit (scripts/infra/kube/config.sh). */
const POD_PIDS_LIMIT = 512;

/**
 * Starts ASKED processes that stay (or as many as the pod's limit lets it: a refused fork is
 * EAGAIN), prints how many started, then ends them all so the build or the app goes on.
 */
const SPAWN = `
const { spawn } = require('node:child_process');
const kept = [];
for (let i = 0; i < ${ASKED}; i++) {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  child.on('error', (err) => { if (err.code !== 'EAGAIN') throw err; });
  if (child.pid) kept.push(child);
}
console.log('started ' + kept.length + ' of ${ASKED}');
for (const child of kept) child.kill('SIGKILL');
`;

const startedIn = (log: string): number => Number(/^started (\d+) of /m.exec(log)?.[1] ?? NaN);

describe('a pod’s processes', () => {
  it(
    'a build and an app each start no more processes than the pod’s limit, and both go on',
    async () => {
      const commit = await h.appRepository.commit({ files: { 'spawn.js': SPAWN } });
      const { service, id } = await h.newDeployment(
        { commitHash: commit.hash },
        {
          buildCommand: 'node spawn.js && node build.js',
          startCommand: 'node spawn.js && node server.js',
        },
      );

      const { logs } = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
      const app = await k.appLogOnce(service, id, 'started ', ROLLOUT);

      for (const started of [startedIn(buildStepOf(logs)), startedIn(app)]) {
        // It did start processes: a refusal is the limit's, not a failure to spawn at all.
        expect(started).toBeGreaterThan(POD_PIDS_LIMIT / 2);
        expect(started).toBeLessThan(POD_PIDS_LIMIT);
      }
      expect((await h.app(service)).status).toBe(200);
    },
    2 * ROLLOUT + 30_000,
  );
});
