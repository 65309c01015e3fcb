import { createSecretBox, localSourcePolicy, type Runtime } from '@platform/shared';
import type { BuildStore } from './builds/build-store';
import type { Config } from './config';
import type { DeploymentsRepository } from './deployments/deployments.repository';
import { LocalSteps } from './pipeline/steps';
import { connectLocalRuntime } from './runtime/local/client';
import { supervisorEnvOf } from './runtime/local/supervisor.config';
import { Sandbox, sandboxOptions } from './sandbox/sandbox';
import type { SourceSnapshots } from './source/snapshot';

/**
 * The steps of a pipeline on this machine: the sandbox (start-up fails with its remedy where it
 * does not work), and the local runtime's supervisor, found in RUNTIME_DIR or started detached
 * so that it and its apps outlive this process.
 */
export async function openLocalSteps(
  config: Config,
  { logger, lifecycle }: Runtime,
  parts: { snapshots: SourceSnapshots; builds: BuildStore; repository: DeploymentsRepository },
) {
  const sandbox = await Sandbox.create(sandboxOptions(config, config.STEP_KILL_GRACE));
  lifecycle.onShutdown('sandbox', () => sandbox.close());
  const connectOptions = {
    runtimeDir: config.RUNTIME_DIR,
    routerPort: config.RUNTIME_ROUTER_PORT,
    env: supervisorEnvOf(config),
  };
  const runtime = await connectLocalRuntime(connectOptions);
  logger.info(
    { isolated: sandbox.isolated, supervisor: await runtime.ping() },
    'sandbox and local runtime ready',
  );
  const secretBox = createSecretBox(config);
  const steps = new LocalSteps({
    snapshots: parts.snapshots,
    builds: parts.builds,
    sandbox,
    runtime,
    secretBox,
    async liveBuildOf(serviceId) {
      const live = await parts.repository.latestDeployed(serviceId);
      if (!live) return null;
      return (await parts.snapshots.find(live.id))?.buildOf ?? live.id;
    },
    // Never a repository among the platform's own files, its builds and runtime state included.
    sources: localSourcePolicy(config, [config.BUILDS_DIR, config.RUNTIME_DIR]),
    fetchTimeoutMs: config.SOURCE_FETCH_TIMEOUT,
    buildLimits: {
      timeoutMs: config.STEP_TIMEOUT,
      cpuSeconds: config.BUILD_CPU_SECONDS,
      memoryBytes: config.BUILD_MEMORY_BYTES,
      cpus: config.BUILD_CPUS,
      processes: config.BUILD_PROCESSES,
      // A build's /tmp is on its disk (BUILD_DISK_BYTES), not this tmpfs.
      tmpBytes: config.BUILD_DISK_BYTES,
    },
    diskBytes: config.BUILD_DISK_BYTES,
    healthTimeoutMs: config.HEALTH_CHECK_TIMEOUT,
    logPollMs: config.RUNTIME_LOG_POLL_INTERVAL,
  });
  return { steps, runtime, appLogs: runtime, sandbox, secretBox, connectOptions };
}
