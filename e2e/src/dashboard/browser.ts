/// <reference lib="dom" />
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { baseUrl } from '../support/client';

export { useBrowser } from '../support/browser';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A browser tab on the dashboard, in a context of its own, that records every console error and uncaught exception: the
 * suite fails on any (`expectedErrors` are the few a test causes on purpose, e.g. the browser's
 * own line for a 409 it provokes).
 */
export async function dashboardPage(browser: Browser, options?: BrowserContextOptions) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return {
    context,
    page,
    /** Console errors so far, less those matching `expected`. */
    errors: (expected: RegExp[] = []) =>
      errors.filter((e) => !expected.some((pattern) => pattern.test(e))),
  };
}

export const dashboardUrl = (pagePath = '/') => `${baseUrl()}${pagePath}`;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core on the page as it is now: its serious and critical violations (none expected). axe is
 * evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } })
      .axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
}

/**
 * Screenshots for the README (docs/screenshots/<name>-<scheme>-<width>.png), only when
 * DASHBOARD_SCREENSHOTS=1: the page in the light and the dark colour scheme at each width.
 */
export async function screenshots(page: Page, name: string, widths = [1440]): Promise<void> {
  if (process.env.DASHBOARD_SCREENSHOTS !== '1') return;
  const dir = path.resolve(__dirname, '../../../docs/screenshots');
  mkdirSync(dir, { recursive: true });
  const viewport = page.viewportSize();
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of widths) {
      await page.setViewportSize({ width, height: width > 500 ? 900 : 812 });
      await page.screenshot({ path: path.join(dir, `${name}-${colorScheme}-${width}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: null });
  if (viewport) await page.setViewportSize(viewport);
}
