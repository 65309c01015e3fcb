import { getApp, type AppAnswer } from '@platform/shared/testing';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 10;

/** Resolves once `url` answers 200 with the fixture app built from `revision`. */
export async function answering(url: string, revision: string, deadline: number): Promise<void> {
  for (;;) {
    const answer = await getApp(url).catch(() => null);
    if (answer?.status === 200 && (JSON.parse(answer.body) as AppAnswer).commit === revision)
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer with ${revision} in time`);
    await delay(POLL_MS);
  }
}
