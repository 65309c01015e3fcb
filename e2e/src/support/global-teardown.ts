import sharedGlobalTeardown from '../../../libs/shared/src/testing/global-teardown';
import { setTimeout as delay } from 'node:timers/promises';

/** Stops the stack the global setup started (start.sh stops its own children on SIGTERM). */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__E2E_STACK__;
  globalThis.__E2E_STACK__ = undefined;
  if (stack && stack.exitCode === null) {
    const exited = new Promise((resolve) => stack.once('exit', resolve));
    stack.kill('SIGTERM');
    await Promise.race([exited, delay(20_000)]);
  }
  await sharedGlobalTeardown();
}
