import type { AppAnswer } from '@platform/shared/testing';
import { useHarness } from '../test/harness';

const h = useHarness({ pipeline: {} });

const answerOf = (body: string) => JSON.parse(body) as AppAnswer;

describe('deploying a commit', () => {
  it('fetches, builds and starts the commit: its URL answers with that commit’s content', async () => {
    const { service, id } = await h.newDeployment({ commitMessage: 'The first version' });

    const deployed = await h.waitForStatus(service, id, 'DEPLOYED', 25_000);

    const answer = await h.app(service);
    expect(answer.status).toBe(200);
    expect(answerOf(answer.body)).toMatchObject({
      commit: h.firstCommit.revision,
      greeting: 'hello',
    });
    expect(deployed.logs).toContain(`built revision ${h.firstCommit.revision}`);
  });
});
