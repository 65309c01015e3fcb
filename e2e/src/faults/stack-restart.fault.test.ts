import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@platform/shared/testing';
import { E2E_PORTS, requireLocalStack } from '../support/stack';

/** Where scripts/start.sh keeps the e2e stack's logs and pid files (LOG_DIR, STACK_NAME=e2e). */
const LOG_DIR = path.join(
  process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'),
  'platform-dev/run/e2e-logs',
);
const pidOf = (name: string) => Number(readFileSync(path.join(LOG_DIR, `${name}.pid`), 'utf8'));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `npm start` keeps the platform up when one of its processes dies (issue 21, containment): the
 * stack the suite started is scripts/start.sh, which starts the process again instead of stopping
 * everything.
 */
describe('npm start when the deployments service dies', () => {
  beforeAll(requireLocalStack);

  it('starts it again and leaves the rest of the platform as it was', async () => {
    const others = ['gateway', 'auth', 'projects', 'webhooks', 'dev-idp'];
    const before = Object.fromEntries(others.map((name) => [name, pidOf(name)]));
    const killed = pidOf('deployments');
    process.kill(killed, 'SIGKILL');

    const restarted = await waitFor(
      () => {
        const pid = pidOf('deployments');
        return pid !== killed && alive(pid) ? pid : undefined;
      },
      { timeoutMs: 30_000, what: 'start.sh to start deployments again' },
    );
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${E2E_PORTS.DEPLOYMENTS_PORT}/readyz`).catch(() => null))
          ?.ok,
      { timeoutMs: 90_000, what: 'the new deployments process to be ready' },
    );
    expect(alive(restarted)).toBe(true);
    for (const name of others) {
      expect([name, pidOf(name), alive(before[name]!)]).toEqual([name, before[name], true]);
    }
    expect((await fetch(`${process.env.E2E_BASE_URL}/readyz`)).status).toBe(200);
  });
});
