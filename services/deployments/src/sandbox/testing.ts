import { sandboxOptions, type SandboxOptions } from './sandbox.options';
import { sandboxEnv } from './sandbox.env';
import type { SandboxLimits } from './limits';

/** Limits roomy enough for a test's commands (node among them). */
export const TEST_LIMITS: SandboxLimits = {
  memoryBytes: 1024 ** 3,
  cpus: 1,
  processes: 256,
  tmpBytes: 64 * 1024 ** 2,
};

/** The sandbox's options as a service on this machine reads them, for a test. */
export function testSandboxOptions(overrides: Partial<SandboxOptions> = {}): SandboxOptions {
  return {
    ...sandboxOptions({ ...sandboxEnv.parse(process.env), NODE_ENV: 'test' }, 500),
    ...overrides,
  };
}
