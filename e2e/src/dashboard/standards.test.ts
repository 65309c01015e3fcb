/// <reference lib="dom" />
import type { Page } from 'playwright-core';
import { dashboardPage, dashboardUrl, seriousViolations, useBrowser } from './browser';
import { UI_TIMEOUT, expectAccessible, signIn } from './flows';
import { uniqueEmail } from '../support/client';

/** The focused element shows a visible outline (the keyboard's :focus-visible). */
const focusOutline = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement;
    const style = getComputedStyle(element);
    return { tag: element.tagName, outline: style.outlineStyle, width: style.outlineWidth };
  });

describe('the dashboard for every person and screen', () => {
  const browser = useBrowser();

  it('is usable with the keyboard alone, focus always visible', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await page.goto(dashboardUrl('/sign-in'));
    await expectAccessible(page, 'Sign in to Platform');
    await page.keyboard.press('Tab');
    expect(await focusOutline(page)).toMatchObject({ tag: 'INPUT', outline: 'solid' });
    await page.keyboard.type(uniqueEmail());
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard Person');
    await page.keyboard.press('Enter');
    await expectAccessible(page, 'Projects');

    // Skip link, then on to the new project's name; create it with Enter.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    expect(await focusOutline(page)).toMatchObject({ outline: 'solid' });
    const name = `Keys ${Date.now()}`;
    await page.getByLabel('Project name').focus();
    await page.keyboard.type(name);
    await page.keyboard.press('Enter');
    await expectAccessible(page, name);
    expect(errors()).toEqual([]);
    await context.close();
  });

  it('fits a 375 px wide screen and passes axe in the dark colour scheme, keeping nothing in storage', async () => {
    const { context, page, errors } = await dashboardPage(browser(), {
      viewport: { width: 375, height: 812 },
      colorScheme: 'dark',
    });
    await signIn(page);
    await expectAccessible(page, 'Projects');
    const name = `Narrow ${Date.now()}`;
    await page.getByLabel('Project name').fill(name);
    await page.getByRole('button', { name: 'Create project' }).click();
    await expectAccessible(page, name);
    await page.getByText('New service').click();
    expect(await seriousViolations(page)).toEqual([]);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    expect(
      await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length })),
    ).toEqual({ local: 0, session: 0 });
    await page.getByText('No services yet.').waitFor({ timeout: UI_TIMEOUT });
    expect(errors()).toEqual([]);
    await context.close();
  });

  it('is served with a strict CSP and no inline script', async () => {
    const response = await fetch(dashboardUrl('/projects'), { headers: { accept: 'text/html' } });
    const html = await response.text();
    const csp = response.headers.get('content-security-policy')!;

    expect(csp).toMatch(/script-src 'self'(;| https:\/\/accounts\.google\.com\/gsi\/client;)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    for (const [, attributes, body] of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(attributes).toMatch(/src="\/assets\//);
      expect(body).toBe('');
    }
  });
});
