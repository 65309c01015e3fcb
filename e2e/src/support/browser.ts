import { existsSync } from 'node:fs';
import { useRunning } from '@platform/shared/testing';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's chromium, headless (npm test installs it; CHROMIUM_PATH names another). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no browser at ${CHROMIUM}: npm test installs Debian's chromium; or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A browser for the tests of the enclosing `describe` block: launched before them, closed after.
 * Returns a getter, as `useRunning` does.
 */
export const useBrowser = () => useRunning(launchBrowser);
