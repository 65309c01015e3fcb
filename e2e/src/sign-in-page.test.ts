/// <reference lib="dom" />
import { useBrowser } from './support/browser';
import { baseUrl, uniqueEmail } from './support/client';

/** A person signs in from a real (headless) browser on the development sign-in page. */
describe('the development sign-in page in a browser', () => {
  const browser = useBrowser();

  it('signs a person in, shows their account and projects, and keeps the session cookie httpOnly', async () => {
    const context = await browser().newContext();
    const page = await context.newPage();
    const email = uniqueEmail();
    await page.goto(`${baseUrl()}/dev/`);
    await page.fill('#email', email);
    await page.fill('#name', 'Browser Person');
    await page.click('#sign-in');

    await page.waitForFunction(
      (e) => document.querySelector('#me')?.textContent?.includes(e),
      email,
      { timeout: 15_000 },
    );
    expect(await page.textContent('#me')).toContain('Browser Person');
    await page.waitForFunction(
      () => (document.querySelector('#projects')?.textContent ?? '').trim().length > 0,
    );
    expect((await page.textContent('#error'))?.trim() ?? '').toBe('');

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name !== 'g_csrf_token');
    expect(session).toBeDefined();
    expect(session!.httpOnly).toBe(true);
    expect(session!.sameSite).toBe('Lax');
    // The page's script cannot read the session cookie.
    expect(await page.evaluate(() => document.cookie)).not.toContain(session!.name);

    // The same browser session is signed in for the API too.
    const me = await page.evaluate(async () => (await fetch('/api/accounts/me')).json());
    expect(me).toMatchObject({ email, name: 'Browser Person' });
    await context.close();
  });
});
