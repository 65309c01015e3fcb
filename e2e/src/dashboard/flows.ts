/// <reference lib="dom" />
import { FIXTURE_APP, type AppRepository } from '@platform/shared/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { baseUrl, uniqueEmail } from '../support/client';
import { dashboardUrl, seriousViolations } from './browser';

/** Deadlines are wide: a loaded 2-core machine builds and starts apps slowly. */
export const UI_TIMEOUT = 30_000;
export const DEPLOY_TIMEOUT = 240_000;

/** Signs a new person in through the development identity provider's form on /sign-in. */
export async function signIn(page: Page, next?: string): Promise<string> {
  const email = uniqueEmail();
  if (!page.url().includes('/sign-in')) {
    await page.goto(dashboardUrl(`/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`));
  }
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Name').fill('Dashboard Person');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'), { timeout: UI_TIMEOUT });
  return email;
}

/** The page has rendered its heading; axe finds no serious or critical violation on it. */
export async function expectAccessible(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: UI_TIMEOUT });
  expect(await seriousViolations(page)).toEqual([]);
}

/**
 * The error text of the field labelled `label` (the element its aria-describedby names first),
 * once the field is marked invalid.
 */
export async function fieldError(page: Page, label: string): Promise<string | null> {
  const field = page.getByLabel(label, { exact: true });
  await page.waitForFunction(
    (name) =>
      Array.from(document.querySelectorAll('label')).some(
        (l) =>
          l.textContent === name &&
          document.getElementById(l.htmlFor)?.getAttribute('aria-invalid') === 'true',
      ),
    label,
    { timeout: UI_TIMEOUT },
  );
  const describedBy = (await field.getAttribute('aria-describedby'))!.split(' ');
  return page.locator(`[id="${describedBy[0]}"]`).textContent();
}

/** Waits until the deployment page shows `status` (the badge beside "Status"). */
export async function waitForStatus(page: Page, status: string, timeout = DEPLOY_TIMEOUT) {
  await page.locator('#deployment-status').getByText(status, { exact: true }).waitFor({ timeout });
}

/**
 * Made through a signed-in context's API (not the pages under test): a commit of the fixture app
 * whose build first prints `<name> line 1` to `<name> line <lines>`, one every 100 ms, and a new
 * project with a service `name` that builds it.
 */
export async function slowBuildService(
  context: BrowserContext,
  repository: AppRepository,
  name: string,
  lines: number,
) {
  const script = `for (let i = 1; i <= ${lines}; i++) setTimeout(() => console.log('${name} line ' + i), i * 100);`;
  const commit = await repository.commit({ files: { [`${name}-build.js`]: script } });
  const api = context.request;
  const project = await (
    await api.post(`${baseUrl()}/api/projects`, { data: { name: `${name} ${Date.now()}` } })
  ).json();
  const service = await (
    await api.post(`${baseUrl()}/api/projects/${project.id}/services`, {
      data: {
        name,
        repository: repository.url,
        ...FIXTURE_APP,
        buildCommand: `node ${name}-build.js && ${FIXTURE_APP.buildCommand}`,
      },
    })
  ).json();
  return { commit, project, service };
}
