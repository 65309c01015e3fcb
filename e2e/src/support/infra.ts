import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { INFRA } from './stack';

const run = promisify(execFile);

/** Stops or starts one of the local servers (scripts/infra/infra.sh), waiting until done. */
export async function infra(
  action: 'stop' | 'start',
  component: 'redis' | 'kafka' | 'mongo',
): Promise<void> {
  await run('bash', [INFRA, action, component], { timeout: 180_000 });
}
