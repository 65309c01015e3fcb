import { getApp, type AppAnswer } from '@platform/shared/testing';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 10;

/** GET `url` at its own address (getApp goes to 127.0.0.1 with the URL's Host). */
export async function getDirect(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/**
 * Resolves once `url` answers 200 with the fixture app built from `revision`; asked through this
 * machine's gateway (getApp: 127.0.0.1, the URL's Host) unless `get` says otherwise.
 */
export async function answering(
  url: string,
  revision: string,
  deadline: number,
  get: (url: string) => Promise<{ status: number; body: string }> = getApp,
): Promise<void> {
  for (;;) {
    const answer = await get(url).catch(() => null);
    if (answer?.status === 200 && (JSON.parse(answer.body) as AppAnswer).commit === revision)
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer with ${revision} in time`);
    await delay(POLL_MS);
  }
}
