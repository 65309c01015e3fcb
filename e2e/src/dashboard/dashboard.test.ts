/// <reference lib="dom" />
import { FIXTURE_APP, useAppRepository, useRunning } from '@platform/shared/testing';
import { startReceiver, verifyStandardWebhook } from '../support/receiver';
import { dashboardPage, dashboardUrl, screenshots, seriousViolations, useBrowser } from './browser';
import { DEPLOY_TIMEOUT, UI_TIMEOUT, expectAccessible, signIn, waitForStatus } from './flows';

/**
 * A person uses the dashboard in Chromium from sign-in to deleting the project: every step
 * through the pages and controls a person uses (found by role and accessible name), axe on each
 * page, and no console error anywhere.
 */
describe('the web dashboard in a browser', () => {
  const browser = useBrowser();
  const repository = useAppRepository();
  const receiver = useRunning(startReceiver);

  it('signs in, creates a project and service, deploys, fails, rolls back, sends a webhook and deletes the project', async () => {
    // The app answers only after 4 s: the deployment stays DEPLOYING while its log is already there.
    const first = await repository().commit({ greeting: 'first', listenAfterSeconds: 4 });
    const second = await repository().commit({ greeting: 'second' });
    const broken = await repository().commit({ failBuild: true, message: 'broken build' });
    const { context, page, errors } = await dashboardPage(browser(), {
      viewport: { width: 1280, height: 900 },
    });

    // Sign in, then the projects page.
    await page.goto(dashboardUrl('/sign-in'));
    await expectAccessible(page, 'Sign in to Platform');
    await screenshots(page, 'sign-in');
    await signIn(page);
    await expectAccessible(page, 'Projects');

    // A project.
    const projectName = `Browser project ${Date.now()}`;
    await page.getByLabel('Project name').fill(projectName);
    await page.getByLabel('Description').fill('Made by the browser suite');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expectAccessible(page, projectName);

    // A service from the local git fixture.
    await page.getByText('New service').click();
    const form = page.getByRole('form', { name: 'New service' });
    await form.getByLabel('Service name').fill('web');
    await form.getByLabel('Git repository').fill(repository().url);
    await form.getByLabel('Build command').fill(FIXTURE_APP.buildCommand);
    await form.getByLabel('Start command').fill(FIXTURE_APP.startCommand);
    await form.getByLabel('Health check path').fill(FIXTURE_APP.healthCheckPath);
    await form.getByRole('button', { name: 'Create service' }).click();
    await expectAccessible(page, 'web');
    await page.getByText('Not live yet').waitFor({ timeout: UI_TIMEOUT });

    // A plain and a secret variable: the secret's value is never shown again.
    const addVariable = async (name: string, value: string, secret: boolean) => {
      const variableForm = page.getByRole('form', { name: 'Add a variable' });
      await variableForm.getByLabel('Variable name').fill(name);
      await variableForm.getByLabel('Value').fill(value);
      if (secret) await variableForm.getByRole('checkbox', { name: /^Secret/ }).check();
      await variableForm.getByRole('button', { name: 'Add variable' }).click();
      await page
        .getByRole('list', { name: 'Variables' })
        .getByRole('button', { name: `Delete ${name}` })
        .waitFor({ timeout: UI_TIMEOUT });
    };
    await addVariable('GREETING', 'hello from the dashboard', false);
    await addVariable('API_TOKEN', 'tok-very-secret-value', true);
    const variables = page.getByRole('list', { name: 'Variables' });
    expect(await variables.textContent()).toContain('hello from the dashboard');
    expect(await variables.textContent()).toContain('secret · hidden');
    expect(await page.content()).not.toContain('tok-very-secret-value');

    // Deploy: the log arrives while the deployment is still running.
    const deploy = async (hash: string, message: string) => {
      const deployForm = page.getByRole('form', { name: 'Deploy a commit' });
      await deployForm.getByLabel('Commit hash').fill(hash);
      await deployForm.getByLabel('Message (optional)').fill(message);
      await deployForm.getByRole('button', { name: 'Deploy' }).click();
      await page.waitForURL(/\/deployments\/[0-9a-f]+$/, { timeout: UI_TIMEOUT });
    };
    await deploy(first.hash, 'first version');
    await expectAccessible(page, /^Deployment/);
    await page.waitForFunction(
      () => {
        const lines = Number(document.querySelector('[role="log"]')?.getAttribute('data-lines'));
        const status = document.querySelector('#deployment-status')?.textContent ?? '';
        return lines > 0 && (status === 'BUILDING' || status === 'DEPLOYING');
      },
      undefined,
      { timeout: DEPLOY_TIMEOUT, polling: 'raf' },
    );
    await waitForStatus(page, 'DEPLOYED');
    expect(await page.getByRole('log').textContent()).toContain(
      `building revision ${first.revision}`,
    );
    await screenshots(page, 'deployment');

    // The service's URL: the app answers with the variable the dashboard set.
    await page.getByRole('link', { name: 'Service', exact: true }).click();
    await expectAccessible(page, 'web');
    const liveLink = page.locator('.live-url a');
    await liveLink.waitFor({ timeout: UI_TIMEOUT });
    const url = (await liveLink.getAttribute('href'))!;
    const appPage = await context.newPage();
    const appAnswer = async () => {
      const response = await appPage.goto(url);
      return JSON.parse((await response!.text()) || '{}');
    };
    expect(await appAnswer()).toMatchObject({
      commit: first.revision,
      greeting: 'hello from the dashboard',
    });

    // A second version, then a broken one: FAILED, and the second still serves.
    await deploy(second.hash, 'second version');
    await waitForStatus(page, 'DEPLOYED');
    await page.getByRole('link', { name: 'Service', exact: true }).click();
    await deploy(broken.hash, 'broken build');
    await waitForStatus(page, 'FAILED');
    expect(await page.getByRole('log').textContent()).toContain('build failed on purpose');
    expect(await appAnswer()).toMatchObject({ commit: second.revision });

    // Roll back to the first version from the service's deployments list.
    await page.getByRole('link', { name: 'Service', exact: true }).click();
    await expectAccessible(page, 'web');
    const firstRow = page
      .getByRole('list', { name: 'Deployments' })
      .getByRole('listitem')
      .filter({ hasText: 'first version' });
    await firstRow.getByRole('button', { name: /^Roll back to this/ }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f]+$/, { timeout: UI_TIMEOUT });
    await waitForStatus(page, 'DEPLOYED');
    expect(await page.getByRole('log').textContent()).toContain('reusing the build of deployment');
    expect(await appAnswer()).toMatchObject({ commit: first.revision });
    await page.getByRole('link', { name: 'Service', exact: true }).click();
    await expectAccessible(page, 'web');
    await screenshots(page, 'service', [1440, 375]);

    // A webhook: its secret shown once; a test event reaches the local receiver, signed.
    await page.getByRole('link', { name: 'Project', exact: true }).click();
    await expectAccessible(page, projectName);
    // The project lists the service with its latest deployment's status and its URL.
    const serviceRow = page
      .getByRole('list', { name: 'Services' })
      .getByRole('listitem')
      .filter({ hasText: 'web' });
    await serviceRow.getByText('DEPLOYED', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(await serviceRow.getByRole('link', { name: url }).count()).toBe(1);
    await page.getByLabel('Webhook URL').fill(receiver().url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.getByLabel('Signing secret').textContent({ timeout: UI_TIMEOUT }))!;
    expect(secret).toMatch(/^whsec_/);
    await page
      .getByRole('list', { name: 'Webhooks' })
      .getByRole('link', { name: receiver().url })
      .click();
    await expectAccessible(page, 'Webhook');
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const delivery = page.getByRole('list', { name: 'Deliveries' }).getByRole('listitem').first();
    await delivery.getByText('succeeded').waitFor({ timeout: UI_TIMEOUT });
    expect(receiver().received.length).toBeGreaterThanOrEqual(1);
    expect(verifyStandardWebhook(secret, receiver().received.at(-1)!)).toBe(true);
    await delivery.locator('summary').click();
    await delivery
      .getByRole('list', { name: 'Attempts' })
      .getByText('HTTP 204')
      .waitFor({ timeout: UI_TIMEOUT });
    await expectAccessible(page, 'Webhook');

    // Delete the project: the confirmation names what goes with it.
    await page.getByRole('link', { name: 'Project', exact: true }).click();
    await expectAccessible(page, projectName);
    await screenshots(page, 'project');
    await page.getByRole('button', { name: 'Delete project…' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete “${projectName}”?` });
    await dialog.getByText('1 service').waitFor({ timeout: UI_TIMEOUT });
    expect(await dialog.textContent()).toContain('1 webhook');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Delete project and everything in it' }).click();
    await expectAccessible(page, 'Projects');
    await page.getByText('No projects yet').waitFor({ timeout: UI_TIMEOUT });
    const gone = await context.request.get(dashboardUrl('/api/projects'));
    expect((await gone.json()).projects).toEqual([]);

    expect(errors()).toEqual([]);
    await context.close();
  }, 900_000);
});
