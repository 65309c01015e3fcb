/// <reference lib="dom" />
import { dashboardPage, dashboardUrl, useBrowser } from './browser';
import { UI_TIMEOUT, expectAccessible, signIn } from './flows';

// The browser's own console line for an answer a test provokes on purpose (never any other).
const failedToLoad = (...statuses: number[]) =>
  new RegExp(
    `Failed to load resource: the server responded with a status of (${statuses.join('|')})`,
  );

/** What a person sees when something goes wrong: words and a way on, never a blank page. */
describe('errors in the dashboard', () => {
  const browser = useBrowser();

  it('sends a signed-out person to sign-in and back to the page they asked for, there a 404 page', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    const missing = '/projects/0123456789abcdef01234567';
    await page.goto(dashboardUrl(missing));
    await page.waitForURL(/\/sign-in\?next=/, { timeout: UI_TIMEOUT });
    expect(new URL(page.url()).searchParams.get('next')).toBe(missing);
    await expectAccessible(page, 'Sign in to Platform');

    await signIn(page);
    expect(new URL(page.url()).pathname).toBe(missing);
    await expectAccessible(page, 'Not found');
    await page.getByRole('link', { name: 'Back to your projects' }).click();
    await expectAccessible(page, 'Projects');
    expect(errors([failedToLoad(401, 404)])).toEqual([]);
    await context.close();
  });

  it("shows a 409 at the field it concerns, with the API's words", async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await signIn(page);
    const name = `Twice ${Date.now()}`;
    for (let i = 0; i < 2; i++) {
      await page.goto(dashboardUrl('/'));
      await page.getByLabel('Project name').fill(name);
      await page.getByRole('button', { name: 'Create project' }).click();
      if (i === 0) await expectAccessible(page, name);
    }
    const field = page.getByLabel('Project name');
    await page.waitForFunction(
      () => document.querySelector('[aria-invalid="true"]') !== null,
      undefined,
      { timeout: UI_TIMEOUT },
    );
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await field.getAttribute('aria-describedby'))!;
    const message = await page.locator(`[id="${describedBy.split(' ')[0]}"]`).textContent();
    expect(message).toMatch(/already|exists|taken|use/i);
    await expectAccessible(page, 'Projects');
    expect(errors([failedToLoad(409)])).toEqual([]);
    await context.close();
  });

  it.each([
    [429, { 'retry-after': '30' }, 'RATE_LIMITED', 'Too many requests. Try again in 30 s.'],
    [503, {}, 'SERVICE_UNAVAILABLE', 'The platform is busy or restarting. Try again.'],
  ])(
    'answers a %i with what to do and a "Try again" that works',
    async (status, headers, error, text) => {
      const { context, page, errors } = await dashboardPage(browser());
      await signIn(page);
      await expectAccessible(page, 'Projects');
      // The gateway's answer as it would come when the limit or a service is hit.
      await page.route('**/api/projects?*', (route) =>
        route.fulfill({
          status,
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ error, message: 'refused for the test' }),
        }),
      );
      await page.reload();
      await page.getByText(text).waitFor({ timeout: UI_TIMEOUT });
      expect(await page.content()).not.toContain('refused for the test');
      await expectAccessible(page, 'Projects');
      await page.unrouteAll();
      await page.getByRole('button', { name: 'Try again' }).click();
      await page
        .getByText(/No projects yet|created/)
        .first()
        .waitFor({ timeout: UI_TIMEOUT });
      expect(errors([failedToLoad(status)])).toEqual([]);
      await context.close();
    },
  );

  it('signs out: the session is gone and the next page asks to sign in', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await signIn(page);
    await expectAccessible(page, 'Projects');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/, { timeout: UI_TIMEOUT });
    const me = await context.request.get(dashboardUrl('/api/accounts/me'));
    expect(me.status()).toBe(401);
    await page.goto(dashboardUrl('/'));
    await page.waitForURL(/\/sign-in\?next=%2F/, { timeout: UI_TIMEOUT });
    expect(errors([failedToLoad(401)])).toEqual([]);
    await context.close();
  });
});
