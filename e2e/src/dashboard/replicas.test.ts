/// <reference lib="dom" />
import type { Request } from 'playwright-core';
import { baseUrl } from '../support/client';
import { dashboardPage, dashboardUrl, useBrowser } from './browser';
import { UI_TIMEOUT, expectAccessible, fieldError, signIn } from './flows';

const failedToLoad = /Failed to load resource: the server responded with a status of 400/;

/** A service's `replicas` (contracts.md "Services": a whole number 1–10, default 1) in its forms. */
describe('a service’s replicas in the dashboard', () => {
  const browser = useBrowser();

  it('creates a service with 3 replicas, refuses 0, 11 and "abc" before sending, shows the API’s own 400 at the field, and resets to 1', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await signIn(page);
    const api = context.request;
    const project = await (
      await api.post(`${baseUrl()}/api/projects`, { data: { name: `replicas ${Date.now()}` } })
    ).json();
    // Every service body the page sends, in order: what the form refused never appears here.
    const sent: unknown[] = [];
    page.on('request', (request: Request) => {
      if (/\/services(\/[0-9a-f]+)?$/.test(request.url()) && request.method() !== 'GET') {
        sent.push((request.postDataJSON() as { replicas: unknown }).replicas);
      }
    });

    // Create: 0 refused at the field with the API's words, then 3 sent and saved.
    await page.goto(dashboardUrl(`/projects/${project.id}`));
    await expectAccessible(page, project.name);
    await page.getByText('New service', { exact: true }).click();
    const create = page.getByRole('form', { name: 'New service' });
    await create.getByLabel('Service name').fill('web');
    await create.getByLabel('Replicas').fill('0');
    await create.getByRole('button', { name: 'Create service' }).click();
    expect(await fieldError(page, 'Replicas')).toBe('must be at least 1');
    await expectAccessible(page, project.name);
    await create.getByLabel('Replicas').fill('3');
    await create.getByRole('button', { name: 'Create service' }).click();
    await page.waitForURL(/\/services\/[0-9a-f]+$/, { timeout: UI_TIMEOUT });
    await expectAccessible(page, 'web');
    const serviceApi = `${baseUrl()}/api${new URL(page.url()).pathname}`;
    expect((await (await api.get(serviceApi)).json()).replicas).toBe(3);

    // Edit: the settings show 3; 11 and "abc" refused, each with its reason, nothing sent.
    await page.getByText('Settings', { exact: true }).click();
    const settings = page.getByRole('form', { name: 'Service settings' });
    const replicas = settings.getByLabel('Replicas');
    expect(await replicas.inputValue()).toBe('3');
    const save = settings.getByRole('button', { name: 'Save settings' });
    for (const [typed, reason] of [
      ['11', 'must be at most 10'],
      ['abc', 'must be a whole number'],
    ]) {
      await replicas.fill(typed!);
      await save.click();
      await settings.getByText(reason!, { exact: true }).waitFor({ timeout: UI_TIMEOUT });
      expect(await fieldError(page, 'Replicas')).toBe(reason);
    }
    await expectAccessible(page, 'web');

    // The API's own 400 lands at the same field: the page sends 5, which becomes 11 on the way.
    expect((await api.patch(serviceApi, { data: { replicas: 11 } })).status()).toBe(400);
    await page.route(serviceApi, (route) =>
      route.request().method() === 'PATCH'
        ? route.continue({
            postData: JSON.stringify({ ...route.request().postDataJSON(), replicas: 11 }),
          })
        : route.continue(),
    );
    await replicas.fill('5');
    const refused = page.waitForResponse(
      (r) => r.url() === serviceApi && r.request().method() === 'PATCH',
      { timeout: UI_TIMEOUT },
    );
    await save.click();
    const answer = await refused;
    expect(answer.status()).toBe(400);
    expect((await answer.json()).details).toEqual([
      expect.objectContaining({ path: 'replicas', message: 'must be at most 10' }),
    ]);
    await settings
      .getByText('must be at most 10', { exact: true })
      .waitFor({ timeout: UI_TIMEOUT });
    expect(await fieldError(page, 'Replicas')).toBe('must be at most 10');
    await page.unrouteAll();

    // Emptied: null, back to the default 1.
    await replicas.fill('');
    await save.click();
    await settings
      .getByRole('status')
      .getByText(/^Saved/)
      .waitFor({ timeout: UI_TIMEOUT });
    expect(await replicas.getAttribute('aria-invalid')).toBeNull();
    expect((await (await api.get(serviceApi)).json()).replicas).toBe(1);
    expect(sent).toEqual([3, 5, null]);
    expect(errors([failedToLoad])).toEqual([]);
    await context.close();
  }, 180_000);
});
