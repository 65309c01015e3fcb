import { createServer } from 'node:http';
import { connect } from 'node:net';
import { mkdirSync, rmSync } from 'node:fs';
import { closeHttpServer, type Runtime } from '@platform/shared';
import { createControlApp } from './control';
import { Sandbox, sandboxOptions } from '../../sandbox/sandbox';
import { createRouter } from '../router';
import { sandboxLauncher } from './sandbox-launcher';
import { Supervisor } from './supervisor';
import { controlSocketOf, type SupervisorConfig } from './supervisor.config';

/**
 * The supervisor's composition root (supervisor-main.ts through runService): the sandbox (it
 * refuses to start where the sandbox does not work), the Supervisor, its control API on the unix
 * socket, and the router as the app runService listens with. At shutdown the control API
 * closes, then every app is stopped (the router closes first).
 */
export async function composeSupervisor(config: SupervisorConfig, { logger, lifecycle }: Runtime) {
  mkdirSync(config.RUNTIME_DIR, { recursive: true, mode: 0o700 });
  // Before anything is made: a second supervisor leaves the first one's sandboxes and logs alone.
  const socketPath = controlSocketOf(config.RUNTIME_DIR);
  if (await answers(socketPath)) {
    throw new Error(`another supervisor already answers on ${socketPath}`);
  }
  const sandbox = await Sandbox.create(sandboxOptions(config, config.RUNTIME_STOP_GRACE));
  lifecycle.onShutdown('sandbox', () => sandbox.close());
  logger.info({ isolated: sandbox.isolated }, 'sandbox ready');
  const launcher = sandboxLauncher(sandbox, {
    limits: {
      memoryBytes: config.RUNTIME_APP_MEMORY_BYTES,
      cpus: config.RUNTIME_APP_CPUS,
      processes: config.RUNTIME_APP_PROCESSES,
      tmpBytes: config.RUNTIME_APP_TMP_BYTES,
    },
    network: true,
  });
  const supervisor = new Supervisor({
    launcher,
    runtimeDir: config.RUNTIME_DIR,
    logger,
    restart: {
      initialDelayMs: config.RUNTIME_RESTART_BACKOFF,
      maxDelayMs: config.RUNTIME_RESTART_BACKOFF_MAX,
      limit: config.RUNTIME_RESTART_LIMIT,
      windowMs: config.RUNTIME_RESTART_WINDOW,
    },
    stopGraceMs: config.RUNTIME_STOP_GRACE,
    drainTimeoutMs: config.RUNTIME_DRAIN_TIMEOUT,
    logLimits: { maxLineBytes: config.LOG_LINE_MAX_BYTES, maxBytes: config.RUNTIME_LOG_MAX_BYTES },
    retentionMs: config.RUNTIME_RELEASE_RETENTION,
  });
  lifecycle.onShutdown('apps', () => supervisor.close());

  rmSync(socketPath, { force: true });
  const control = createServer(createControlApp(supervisor, logger));
  // A start waits for the health check: no request timeout on the control API.
  control.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    control.once('error', reject);
    control.listen(socketPath, resolve);
  });
  lifecycle.onShutdown('control api', () => closeHttpServer(control));
  logger.info({ socketPath, pid: process.pid }, 'control API listening');

  return {
    app: createRouter((serviceId) => supervisor.liveRelease(serviceId), logger),
    supervisor,
  };
}

/** Whether something accepts connections on the unix socket (a stale file does not). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
