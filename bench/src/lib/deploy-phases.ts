import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ms } from './log';
import { percentile } from './stats';

/**
 * Where a deployment's time goes inside the platform, from the deployments service's own log
 * (the stack's `deployments.log`): the claim (`running deployment`, `sinceCreatedMs`), each
 * step's phases (`step timings`, PhaseTimer) and each status write (`deployment moved on`). The
 * p50 of each, in the order they happen, over the deployments named.
 */
export function deployPhases(logDir: string, deploymentIds: string[]): Record<string, number> {
  const wanted = new Set(deploymentIds);
  const samples = new Map<string, number[]>();
  const add = (name: string, value: number) => {
    const list = samples.get(name) ?? [];
    list.push(value);
    samples.set(name, list);
  };
  const log = readFileSync(path.join(logDir, 'deployments.log'), 'utf8');
  for (const text of log.split('\n')) {
    if (!text.startsWith('{')) continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    if (!wanted.has(line.deploymentId as string)) continue;
    if (line.msg === 'running deployment')
      add('claimed (after the insert)', Number(line.sinceCreatedMs));
    if (line.msg === 'step timings') {
      for (const [phase, value] of Object.entries(line.phases as Record<string, number>)) {
        add(`${String(line.step)}: ${phase}`, value);
      }
      add(`${String(line.step)} step (all)`, Number(line.ms));
    }
    if (line.msg === 'deployment moved on')
      add(`status ${String(line.status)} written`, Number(line.ms));
  }
  return Object.fromEntries(
    [...samples].map(([name, values]) => [
      name,
      ms(
        percentile(
          values.sort((a, b) => a - b),
          50,
        ),
      ),
    ]),
  );
}
