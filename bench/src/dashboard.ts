/// <reference lib="dom" />
/**
 * The web dashboard (section 12): its JavaScript and CSS as shipped (bytes, gzipped), the time
 * to first render of the projects page and of a deployment's log page in Chromium (Debian's,
 * headless) on the local stack, and the live log's delay behind the API's event stream.
 *
 * - Sizes: every file of apps/dashboard/dist/assets, raw and gzipped (zlib's default level, as
 *   the gateway's compression sends them).
 * - First render: BENCH_ROUNDS (default 15) navigations to each page, each in a new browser
 *   context (nothing cached, signed in by its cookie): from the navigation's start to the first
 *   project row, and to the first and the last line of a finished 1,000-line log (the page's own
 *   performance.now(), sampled every animation frame); and the same with the cache warm (a
 *   second navigation in the same context).
 * - Live delay: one page shows a deployment whose build prints BENCH_LINES (default 300) lines,
 *   one every 10 ms, while a plain EventSource in the same page follows the same log; for every
 *   line, the time it is on screen (a MutationObserver on the log) minus the time the plain
 *   stream delivered it, on the page's one clock.
 */
import { gzipSync } from 'node:zlib';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createAppRepository, FIXTURE_APP } from '@platform/shared/testing';
import { uniqueEmail } from './lib/client';
import { intEnv } from './lib/env';
import { REPO_ROOT } from './lib/env';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack } from './lib/stack';
import { distribution } from './lib/stats';
import { resetStack } from './lib/stores';

const ROUNDS = intEnv('BENCH_ROUNDS', 15);
const LINES = intEnv('BENCH_LINES', 300);
const LOG_PAGE_LINES = 1_000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function assetSizes() {
  const dir = path.join(REPO_ROOT, 'apps/dashboard/dist/assets');
  const files = readdirSync(dir).map((name) => {
    const bytes = readFileSync(path.join(dir, name));
    return { name, bytes: bytes.length, gzipBytes: gzipSync(bytes).length };
  });
  const total = (ext: string) => {
    const of = files.filter((f) => f.name.endsWith(ext));
    return {
      bytes: of.reduce((n, f) => n + f.bytes, 0),
      gzipBytes: of.reduce((n, f) => n + f.gzipBytes, 0),
    };
  };
  return { files, js: total('.js'), css: total('.css') };
}

/** What counts as rendered: `selector` present, with at least `lines` log lines, in `status`. */
interface Rendered {
  selector: string;
  lines?: number;
  status?: string;
}

/** The page's performance.now() when the condition first holds (checked every frame). */
async function renderedAt(page: Page, url: string, condition: Rendered): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  // A function, not a string: the page's CSP forbids eval.
  const handle = await page.waitForFunction(
    (c: Rendered) => {
      const element = document.querySelector<HTMLElement>(c.selector);
      const ok =
        element !== null &&
        (c.lines === undefined || Number(element.dataset.lines) >= c.lines) &&
        (c.status === undefined ||
          document.querySelector('#deployment-status')?.textContent === c.status);
      return ok ? performance.now() : false;
    },
    condition,
    { polling: 'raf', timeout: 60_000 },
  );
  return Number(await handle.jsonValue());
}

async function firstRenders(
  browser: Browser,
  storageState: Awaited<ReturnType<BrowserContext['storageState']>>,
  url: string,
  conditions: Record<string, Rendered>,
) {
  const cold: Record<string, number[]> = {};
  const warm: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, condition] of Object.entries(conditions)) {
      const context = await browser.newContext({ storageState });
      const page = await context.newPage();
      (cold[name] ??= []).push(await renderedAt(page, url, condition));
      (warm[name] ??= []).push(await renderedAt(page, url, condition));
      await context.close();
    }
  }
  const stats = (samples: Record<string, number[]>) =>
    Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, distribution(v)]));
  return { cold: stats(cold), warm: stats(warm) };
}

main('dashboard', 1_200, async () => {
  const sizes = assetSizes();
  say(
    `JS ${sizes.js.gzipBytes} B gzipped (${sizes.js.bytes} B), CSS ${sizes.css.gzipBytes} B gzipped`,
  );
  const repository = await createAppRepository();
  const stack = await startStack({ reset: resetStack, env: { SOURCE_ALLOW_LOCAL: 'true' } });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.gateway}/sign-in`);
    await page.getByLabel('E-mail').fill(uniqueEmail('dashboard'));
    await page.getByLabel('Name').fill('Bench Person');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
    const api = context.request;
    const post = async (p: string, data: unknown) =>
      (await api.post(`${stack.gateway}${p}`, { data })).json();
    for (let i = 0; i < 20; i++) await post('/api/projects', { name: `bench project ${i}` });
    const project = await post('/api/projects', { name: 'bench logs' });
    const quick = await repository.commit();
    const servicePath = `/api/projects/${project.id}/services`;
    const printLines = (count: number, everyMs: number, waitMs: number) =>
      `node -e "setTimeout(() => { let i = 0; const t = setInterval(() => { console.log('line ' + ++i); if (i === ${count}) clearInterval(t); }, ${everyMs}); }, ${waitMs})"`;
    const service = await post(servicePath, {
      name: 'logs',
      repository: repository.url,
      ...FIXTURE_APP,
      buildCommand: `${printLines(LOG_PAGE_LINES, 1, 0)} && ${FIXTURE_APP.buildCommand}`,
    });
    const deploymentsPath = `${servicePath}/${service.id}/deployments`;
    const finished = await post(deploymentsPath, { commitHash: quick.hash });
    await api.get(`${stack.gateway}${deploymentsPath}/${finished.id}?wait=300`);
    const storageState = await context.storageState();

    say(`first render, ${ROUNDS} rounds`);
    const projectsPage = await firstRenders(browser, storageState, `${stack.gateway}/`, {
      firstProjectRow: { selector: 'ul[aria-label="Projects"] li a' },
    });
    const logUrl = `${stack.gateway}/projects/${project.id}/services/${service.id}/deployments/${finished.id}`;
    const logPage = await firstRenders(browser, storageState, logUrl, {
      firstLogLine: { selector: '[role="log"]', lines: 1 },
      wholeLog: { selector: '[role="log"]', lines: LOG_PAGE_LINES, status: 'DEPLOYED' },
    });

    say(`live delay: ${LINES} lines, one every 10 ms`);
    await api.patch(`${stack.gateway}${servicePath}/${service.id}`, {
      data: { buildCommand: `${printLines(LINES, 10, 4000)} && ${FIXTURE_APP.buildCommand}` },
    });
    const live = await post(deploymentsPath, { commitHash: quick.hash });
    const livePath = `${deploymentsPath}/${live.id}`;
    await page.goto(`${stack.gateway}${livePath.replace('/api', '')}`);
    await page.waitForSelector('[role="log"]');
    await page.evaluate(
      ({ url }) => {
        const w = window as unknown as { raw: number[]; shown: number[] };
        w.raw = [];
        w.shown = [];
        const source = new EventSource(url);
        source.addEventListener(
          'log',
          (e) => (w.raw[Number((e as MessageEvent).lastEventId)] = performance.now()),
        );
        source.addEventListener('status', (e) => {
          if (/DEPLOYED|FAILED|CANCELLED/.test((e as MessageEvent).data)) source.close();
        });
        const log = document.querySelector('[role="log"]') as HTMLElement;
        new MutationObserver(() => {
          const now = performance.now();
          const count = Number(log.dataset.lines);
          for (let n = 1; n <= count; n++) w.shown[n] ??= now;
        }).observe(log, { attributes: true, childList: true, characterData: true, subtree: true });
      },
      { url: `${livePath}/logs` },
    );
    await page.waitForFunction(
      () => document.querySelector('#deployment-status')?.textContent === 'DEPLOYED',
      undefined,
      {
        timeout: 300_000,
      },
    );
    const { raw, shown } = await page.evaluate(() => {
      const w = window as unknown as { raw: (number | null)[]; shown: (number | null)[] };
      return { raw: w.raw, shown: w.shown };
    });
    const delays: number[] = [];
    for (let n = 1; n < raw.length; n++) {
      const [at, on] = [raw[n], shown[n]];
      if (at != null && on != null) delays.push(on - at);
    }
    // The build's own lines come before the printed ones; the plain stream saw them all too.
    const delay = distribution(delays);
    say(`live delay: p50 ${ms(delay.p50)} ms, p99 ${ms(delay.p99)} ms over ${delays.length} lines`);
    say(
      `first render: projects p50 ${ms(projectsPage.cold.firstProjectRow!.p50)} ms cold, log page p50 ${ms(logPage.cold.firstLogLine!.p50)} ms cold`,
    );
    writeResults('dashboard', {
      config: {
        rounds: ROUNDS,
        logPageLines: LOG_PAGE_LINES,
        liveLines: LINES,
        liveLineEveryMs: 10,
      },
      sizes,
      firstRenderMs: { projectsPage, logPage },
      liveDelayMs: { ...delay, lines: delays.length },
      verdicts: [
        verdict('JavaScript gzipped', Math.round(sizes.js.gzipBytes / 1024), '<=', 150, ' KiB'),
        verdict('lines on screen that the plain stream delivered', delays.length, '>=', LINES),
      ],
    });
  } finally {
    await browser.close();
    await repository.close();
  }
});
