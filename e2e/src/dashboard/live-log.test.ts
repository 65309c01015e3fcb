/// <reference lib="dom" />
import { useAppRepository } from '@platform/shared/testing';
import { baseUrl } from '../support/client';
import { dashboardPage, useBrowser } from './browser';
import { startCuttingProxy } from './cutting-proxy';
import {
  DEPLOY_TIMEOUT,
  UI_TIMEOUT,
  expectAccessible,
  signIn,
  slowBuildService,
  waitForStatus,
} from './flows';

// The build prints a numbered line every 100 ms (15 s in all): long enough to be cut mid-way.
const LINES = 150;

describe("a deployment's live log in the browser", () => {
  const browser = useBrowser();
  const repository = useAppRepository();

  it('continues after a dropped connection without repeating or losing a line, and ends at the final status', async () => {
    const proxy = await startCuttingProxy(baseUrl());
    const { context, page, errors } = await dashboardPage(browser());
    try {
      await signIn(page);
      const api = context.request;
      const { commit, project, service } = await slowBuildService(
        context,
        repository(),
        'slow',
        LINES,
      );
      const deploymentsPath = `/api/projects/${project.id}/services/${service.id}/deployments`;
      const deployment = await (
        await api.post(`${baseUrl()}${deploymentsPath}`, { data: { commitHash: commit.hash } })
      ).json();

      // The deployment's page through the proxy; once some lines are in, every connection drops.
      await page.goto(
        `${proxy.url}/projects/${project.id}/services/${service.id}/deployments/${deployment.id}`,
      );
      await expectAccessible(page, /^Deployment/);
      await page.waitForFunction(
        () => Number(document.querySelector('[role="log"]')?.getAttribute('data-lines')) >= 5,
        undefined,
        { timeout: DEPLOY_TIMEOUT },
      );
      const statusAtCut = await page.locator('#deployment-status').textContent();
      expect(statusAtCut).toBe('BUILDING'); // else the build ended before the cut: no test
      proxy.cut();
      await page
        .getByText('Connection lost: reconnecting', { exact: false })
        .waitFor({ timeout: UI_TIMEOUT });

      await waitForStatus(page, 'DEPLOYED');
      const shown = (await page.getByRole('log').textContent())!.split('\n');
      const whole = await (
        await api.get(`${baseUrl()}${deploymentsPath}/${deployment.id}/logs`)
      ).text();
      expect(shown).toEqual(whole.replace(/\n$/, '').split('\n'));
      expect(shown.filter((line) => line.startsWith('slow line '))).toHaveLength(LINES);
      // The browser came back with the last line it had, and the stream went on from there.
      const streams = proxy.requests.filter((r) => r.path.endsWith(`${deployment.id}/logs`));
      expect(streams.length).toBeGreaterThanOrEqual(2);
      expect(Number(streams[1]!.headers['last-event-id'])).toBeGreaterThanOrEqual(5);
      await page.getByText('The deployment has finished.').waitFor({ timeout: UI_TIMEOUT });
      // The browser's own line for the dropped stream is the only console error.
      expect(
        errors([/net::ERR_(EMPTY_RESPONSE|CONNECTION_RESET|INCOMPLETE_CHUNKED_ENCODING)/]),
      ).toEqual([]);
    } finally {
      await context.close();
      await proxy.close();
    }
  }, 600_000);
});
