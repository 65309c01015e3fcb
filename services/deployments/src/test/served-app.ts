import type { AppAnswer } from '@platform/shared/testing';
import type { DeploymentStatus } from '../deployments/status';
import type { Harness } from './harness';
import type { OwnedService } from './projects-stub';

/**
 * What a test of the real pipeline asks of a service's URL (the fixture app, through the
 * runtime's router), whichever runtime runs it.
 */

/** The commit the app at the service's URL was built from, or the failure. */
export async function servedCommit(h: Harness, service: OwnedService): Promise<string> {
  const answer = await h.app(service);
  return answer.status === 200
    ? (JSON.parse(answer.body) as AppAnswer).commit
    : `${answer.status} ${answer.body}`;
}

/** Asks the service's URL in a loop until stop(): every answer, in order. */
export function probe(h: Harness, service: OwnedService) {
  let running = true;
  const answers: string[] = [];
  const loop = (async () => {
    while (running) {
      answers.push(await servedCommit(h, service).catch((err: Error) => err.message));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return answers;
    },
  };
}

/** Triggers `commitHash` on the service and waits (up to `timeoutMs`) until it is in `status`. */
export async function deployCommit(
  h: Harness,
  service: OwnedService,
  commitHash: string,
  status: DeploymentStatus,
  timeoutMs: number,
) {
  const res = await h.api.trigger(service, { commitHash });
  expect(res.status).toBe(201);
  return {
    id: res.body.id as string,
    ...(await h.waitForStatus(service, res.body.id, status, timeoutMs)),
  };
}
