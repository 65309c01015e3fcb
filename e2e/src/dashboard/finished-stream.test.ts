/// <reference lib="dom" />
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '@platform/shared/testing';
import { baseUrl } from '../support/client';
import { dashboardPage, useBrowser } from './browser';
import { startCuttingProxy } from './cutting-proxy';
import { UI_TIMEOUT, signIn } from './flows';
import type { BrowserContext } from 'playwright-core';

/** A browser's EventSource waits this long before it reconnects, unless told otherwise (`retry:`). */
const DEFAULT_RETRY_MS = 3_000;
/** Watched after the stream is closed: room for four more reconnects, had it not been. */
const QUIET_WINDOW_MS = 4 * DEFAULT_RETRY_MS;

/** What the page's EventSource saw, kept on `window` for the test to read. */
interface Seen {
  opens: number;
  errors: number;
  lineIds: string[];
  statuses: string[];
  readyState: number;
}

/**
 * Made through a signed-in context's API: a deployment of a service with no repository, FAILED at
 * once with its log saying why; its paths and its log's last line.
 */
async function failedDeployment(context: BrowserContext) {
  const api = context.request;
  const project = await (
    await api.post(`${baseUrl()}/api/projects`, { data: { name: `finished ${Date.now()}` } })
  ).json();
  const service = await (
    await api.post(`${baseUrl()}/api/projects/${project.id}/services`, {
      data: { name: 'no-repository' },
    })
  ).json();
  const deploymentsPath = `/api/projects/${project.id}/services/${service.id}/deployments`;
  const created = await (
    await api.post(`${baseUrl()}${deploymentsPath}`, { data: { commitHash: 'abcdef1' } })
  ).json();
  const deployment = await (
    await api.get(`${baseUrl()}${deploymentsPath}/${created.id}?wait=60`, { timeout: 90_000 })
  ).json();
  expect(deployment.status).toBe('FAILED');
  return {
    logsPath: `${deploymentsPath}/${created.id}/logs`,
    pagePath: `/projects/${project.id}/services/${service.id}/deployments/${created.id}`,
    lastLine: (deployment.logs as string).trimEnd().split('\n').at(-1)!,
  };
}

describe("a finished deployment's log stream in the browser", () => {
  const browser = useBrowser();

  it('is not reopened: the reconnect gets 204 No Content and the EventSource closes for good', async () => {
    const proxy = await startCuttingProxy(baseUrl());
    const { context, page, errors } = await dashboardPage(browser());
    try {
      await signIn(page);
      const { logsPath } = await failedDeployment(context);

      // A page of the proxy's origin (the dashboard; the session cookie ignores ports) opens a
      // plain EventSource on the finished deployment's log, as any web client would.
      await page.goto(`${proxy.url}/`);
      await page.evaluate((url) => {
        const seen: Seen = { opens: 0, errors: 0, lineIds: [], statuses: [], readyState: 0 };
        const source = new EventSource(url);
        const note = () => (seen.readyState = source.readyState);
        source.onopen = () => {
          seen.opens++;
          note();
        };
        source.onerror = () => {
          seen.errors++;
          note();
        };
        source.addEventListener('log', (event) => seen.lineIds.push(event.lastEventId));
        source.addEventListener('status', (event) =>
          seen.statuses.push(JSON.parse(event.data).status),
        );
        (window as unknown as { seen: Seen }).seen = seen;
      }, logsPath);
      const seen = () => page.evaluate(() => (window as unknown as { seen: Seen }).seen);
      const streams = () => proxy.requests.filter((r) => r.path === logsPath);

      // Closed (EventSource.CLOSED), or reconnecting past the one reconnect it should make.
      await waitFor(async () => (await seen()).readyState === 2 || streams().length > 2, {
        timeoutMs: UI_TIMEOUT,
        what: 'the EventSource to close, or to reconnect a second time',
      });
      // Nothing is to happen now: a window long enough for several reconnects at the default.
      await delay(QUIET_WINDOW_MS);

      const finalSeen = await seen();
      const connections = streams();
      // The first connection got the log and the final status; the reconnect, with the last
      // line's number, got 204; none came after.
      expect(connections.map((c) => c.status)).toEqual([200, 204]);
      expect(connections[0]!.headers['last-event-id']).toBeUndefined();
      expect(finalSeen.lineIds.length).toBeGreaterThan(0);
      expect(connections[1]!.headers['last-event-id']).toBe(finalSeen.lineIds.at(-1));
      // Two errors: the end of the first stream (CONNECTING again), then the 204 (CLOSED).
      expect(finalSeen).toMatchObject({ opens: 1, errors: 2, readyState: 2 });
      expect(finalSeen.statuses).toEqual(['FAILED']);
      expect(errors()).toEqual([]);
    } finally {
      await context.close();
      await proxy.close();
    }
  }, 120_000);

  it('ends on the dashboard with the deployment finished when its reconnect gets 204', async () => {
    const proxy = await startCuttingProxy(baseUrl());
    const { context, page, errors } = await dashboardPage(browser());
    try {
      await signIn(page);
      const { logsPath, pagePath, lastLine } = await failedDeployment(context);
      // The connection is lost after the last line and before the final status: the browser
      // reconnects with that line's number, and the deployment has nothing new.
      proxy.cutAfterLine(lastLine);

      await page.goto(`${proxy.url}${pagePath}`);

      await page.getByText('The deployment has finished.').waitFor({ timeout: UI_TIMEOUT });
      expect(await page.locator('#deployment-status').textContent()).toBe('FAILED');
      expect(await page.getByRole('log').textContent()).toContain(lastLine);
      const connections = proxy.requests.filter((r) => r.path === logsPath);
      expect(connections.map((c) => c.status)).toEqual([200, 204]);
      // The browser's own line for the dropped stream is the only console error.
      expect(
        errors([/net::ERR_(INCOMPLETE_CHUNKED_ENCODING|CONNECTION_RESET|EMPTY_RESPONSE)/]),
      ).toEqual([]);
    } finally {
      await context.close();
      await proxy.close();
    }
  }, 120_000);
});
