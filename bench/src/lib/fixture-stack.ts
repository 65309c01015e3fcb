import { createAppRepository } from '@platform/shared/testing';
import { clientWithFixtureService } from './client';
import { startStack } from './stack';
import { resetStack } from './stores';

/**
 * A fresh stack that builds local repositories (SOURCE_ALLOW_LOCAL=true, `env` added), the
 * fixture app's repository, and a new person's service `web` set to build it
 * (clientWithFixtureService, under `label`). `close()` stops the stack and removes the repository.
 */
export async function startFixtureStack(label: string, env: Record<string, string> = {}) {
  const repository = await createAppRepository();
  try {
    const stack = await startStack({
      reset: resetStack,
      env: { SOURCE_ALLOW_LOCAL: 'true', ...env },
    });
    const owner = await clientWithFixtureService(stack.gateway, label, repository.url);
    const close = async () => {
      await stack.stop();
      await repository.close();
    };
    return { ...owner, repository, close, logDir: stack.logDir };
  } catch (err) {
    await repository.close();
    throw err;
  }
}
