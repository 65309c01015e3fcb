import { request } from 'node:http';
import { getApp, type AppAnswer } from '@platform/shared/testing';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 10;

/**
 * GET `url` at its own address (getApp goes to 127.0.0.1 with the URL's Host), on a connection of
 * its own: a kept one to a Service stays with the pod it reached, the replaced one included.
 */
export function getDirect(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
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
