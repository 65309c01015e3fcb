/// <reference lib="dom" />
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../support/stack';
import { dashboardPage, useBrowser } from './browser';
import { UI_TIMEOUT, expectAccessible, signIn, waitForStatus } from './flows';

/**
 * The README's first deploy, step by step as written there: examples/hello from the git
 * repository scripts/prepare-example.sh makes (npm start runs it), deployed from the dashboard.
 */
describe("the README's first deploy", () => {
  const browser = useBrowser();
  const examples = mkdtempSync(path.join(tmpdir(), 'examples-'));
  afterAll(() => rmSync(examples, { recursive: true, force: true }));

  it('deploys examples/hello from the dashboard and it answers at its URL', async () => {
    const { stdout } = await promisify(execFile)(
      'bash',
      [path.join(REPO_ROOT, 'scripts/prepare-example.sh')],
      { env: { ...process.env, EXAMPLES_DIR: examples } },
    );
    const [repository, commit] = stdout.trim().split(' ');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    const { context, page, errors } = await dashboardPage(browser());

    await signIn(page);
    await page.getByLabel('Project name').fill(`hello ${Date.now()}`);
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByText('New service').click();
    const form = page.getByRole('form', { name: 'New service' });
    await form.getByLabel('Service name').fill('hello');
    await form.getByLabel('Git repository').fill(repository!);
    await form.getByLabel('Start command').fill('node server.js');
    await form.getByLabel('Health check path').fill('/healthz');
    await form.getByRole('button', { name: 'Create service' }).click();
    await expectAccessible(page, 'hello');
    const deployForm = page.getByRole('form', { name: 'Deploy a commit' });
    await deployForm.getByLabel('Commit hash').fill(commit!);
    await deployForm.getByRole('button', { name: 'Deploy' }).click();
    await waitForStatus(page, 'DEPLOYED');
    expect(await page.getByRole('log').textContent()).toContain('hello listening on');

    await page.getByRole('link', { name: 'Service', exact: true }).click();
    const live = page.locator('.live-url a');
    await live.waitFor({ timeout: UI_TIMEOUT });
    const app = await context.newPage();
    await app.goto((await live.getAttribute('href'))!);
    await app.getByRole('heading', { name: 'Hello from your first deployment!' }).waitFor();
    expect(errors()).toEqual([]);
    await context.close();
  }, 600_000);
});
