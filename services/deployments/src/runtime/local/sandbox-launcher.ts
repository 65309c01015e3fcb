import path from 'node:path';
import type { Sandbox, SandboxLimits } from '../../sandbox/sandbox';
import type { ExitStatus, Launcher } from './launcher';

/**
 * Apps started in the sandbox (src/sandbox): without the platform's environment, files or
 * processes, within `limits`, on the host's network so the router reaches their PORT. The stop
 * grace is the sandbox's own (its killGraceMs); a sandbox made with SANDBOX=none runs them as
 * plain processes, which the sandbox allows only in development.
 */
export function sandboxLauncher(
  sandbox: Sandbox,
  options: { limits: SandboxLimits; network: boolean },
): Launcher {
  return {
    async start(spec) {
      const handle = await sandbox.start({
        workspace: spec.workspace,
        cwd: path.relative(spec.workspace, spec.cwd) || '.',
        command: spec.command,
        env: spec.env,
        limits: options.limits,
        network: options.network,
        onOutput: spec.onOutput,
      });
      const exited = handle.exited.then(({ exitCode, signal }): ExitStatus =>
        signal ? { code: null, signal } : { code: exitCode, signal: null },
      );
      return {
        pid: handle.pid,
        exited,
        async stop() {
          await handle.stop();
          return exited;
        },
      };
    },
  };
}
