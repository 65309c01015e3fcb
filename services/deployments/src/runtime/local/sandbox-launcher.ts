import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import type { LimitName, Sandbox, SandboxLimits } from '../../sandbox/sandbox';
import type { ExitStatus, Launcher } from './launcher';

/**
 * The PORT of every sandboxed app: each has a network namespace and an address of its own, so
 * they share no port space and none can take another's.
 */
export const APP_PORT = 8080;

/** A port of the host nobody listens on now (apps without a sandbox share the host's ports). */
async function freeHostPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const MiB = 1024 ** 2;

/** How an app's log names the limit it went past. */
function limitName(limit: LimitName, limits: SandboxLimits): string {
  if (limit === 'memory') {
    return `its memory limit (${Math.round(limits.memoryBytes / MiB)} MiB, RUNTIME_APP_MEMORY_BYTES)`;
  }
  if (limit === 'processes')
    return `its process limit (${limits.processes}, RUNTIME_APP_PROCESSES)`;
  return 'its CPU time limit';
}

/**
 * Apps started in the sandbox (src/sandbox): without the platform's environment, files or
 * processes, within `limits`, each on a network of its own where the router reaches its PORT, on
 * its kept build read-only (never handed to its uid: no `chown -R` per start), writing only to its
 * /tmp, which is its HOME.
 * The stop grace is the sandbox's own (its killGraceMs); a sandbox made with SANDBOX=none runs
 * them as plain processes on a free port of the host, which the sandbox allows only in
 * development.
 */
export function sandboxLauncher(
  sandbox: Sandbox,
  options: { limits: SandboxLimits; network: boolean },
): Launcher {
  return {
    async start(spec) {
      const port = sandbox.isolated ? APP_PORT : await freeHostPort();
      const handle = await sandbox.start({
        workspace: spec.workspace,
        cwd: path.relative(spec.workspace, spec.cwd) || '.',
        command: spec.command,
        // Its build is read-only: its home is where it may write, as on Kubernetes.
        env: { ...spec.env, HOME: '/tmp', PORT: String(port) },
        readOnlyWorkspace: true,
        limits: options.limits,
        network: options.network,
        onOutput: spec.onOutput,
      });
      const exited = handle.exited.then(({ exitCode, signal, limit }): ExitStatus => ({
        ...(signal ? { code: null, signal } : { code: exitCode, signal: null }),
        ...(limit && { limit: limitName(limit, options.limits) }),
      }));
      return {
        pid: handle.pid,
        host: handle.address,
        port,
        exited,
        async stop() {
          await handle.stop();
          return exited;
        },
      };
    },
  };
}
