/// <reference lib="dom" />
import { useAppRepository, useRunning } from '@platform/shared/testing';
import { baseUrl } from '../support/client';
import { startReceiver, verifyStandardWebhook } from '../support/receiver';
import { dashboardPage, dashboardUrl, useBrowser } from './browser';
import {
  UI_TIMEOUT,
  expectAccessible,
  fieldError,
  signIn,
  slowBuildService,
  waitForStatus,
} from './flows';

const failedToLoad = /Failed to load resource: the server responded with a status of 400/;

/** The controls the main flow does not use: each one changes what the API holds. */
describe('the dashboard’s other controls', () => {
  const browser = useBrowser();
  const repository = useAppRepository();
  const receiver = useRunning(startReceiver);

  it('changes, hides and deletes variables, shows a validation error at its field, cancels, filters and redeploys', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await signIn(page);
    const api = context.request;
    // A build that prints a line every 100 ms for a minute: still running when it is cancelled.
    const { commit, project, service } = await slowBuildService(context, repository(), 'long', 600);
    const servicePage = `/projects/${project.id}/services/${service.id}`;
    const variablesApi = `${baseUrl()}/api${servicePage}/variables`;
    await page.goto(dashboardUrl(servicePage));
    await expectAccessible(page, 'long');

    // A variable: added, changed, made secret, deleted.
    const add = page.getByRole('form', { name: 'Add a variable' });
    await add.getByLabel('Variable name').fill('COLOUR');
    await add.getByLabel('Value').fill('blue');
    await add.getByRole('button', { name: 'Add variable' }).click();
    const variables = page.getByRole('list', { name: 'Variables' });
    await variables.getByText('blue', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    await variables.getByRole('button', { name: 'Change COLOUR' }).click();
    const change = page.getByRole('form', { name: 'Change COLOUR' });
    await change.getByLabel('New value of COLOUR').fill('green');
    await change.getByRole('button', { name: 'Save COLOUR' }).click();
    await variables.getByText('green', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    await variables.getByRole('button', { name: 'Change COLOUR' }).click();
    await change.getByLabel('New value of COLOUR').fill('red');
    await change.getByRole('checkbox', { name: /^Secret/ }).check();
    await change.getByRole('button', { name: 'Save COLOUR' }).click();
    await variables.getByText('secret · hidden').waitFor({ timeout: UI_TIMEOUT });
    expect(await variables.textContent()).not.toContain('red');
    expect((await (await api.get(variablesApi)).json()).variables).toEqual([
      expect.objectContaining({ name: 'COLOUR', secret: true }),
    ]);
    await variables.getByRole('button', { name: 'Delete COLOUR' }).click();
    await page.getByText('No variables yet.').waitFor({ timeout: UI_TIMEOUT });
    expect((await (await api.get(variablesApi)).json()).variables).toEqual([]);

    // The API's validation error under the field it concerns.
    await page.getByText('Settings', { exact: true }).click();
    const settings = page.getByRole('form', { name: 'Service settings' });
    await settings.getByLabel('Health check path').fill('no-slash');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    expect(await fieldError(page, 'Health check path')).toMatch(/\//);

    // Deploy, cancel while it builds; the filter shows it among the CANCELLED only.
    const deployForm = page.getByRole('form', { name: 'Deploy a commit' });
    await deployForm.getByLabel('Commit hash').fill(commit.hash);
    await deployForm.getByRole('button', { name: 'Deploy' }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f]+$/, { timeout: UI_TIMEOUT });
    await page
      .getByRole('log')
      .getByText('long line 1', { exact: false })
      .waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('button', { name: /^Cancel/ }).click();
    await waitForStatus(page, 'CANCELLED', UI_TIMEOUT);
    await page.getByText('The deployment has finished.').waitFor({ timeout: UI_TIMEOUT });
    await expectAccessible(page, /^Deployment/);

    await page.getByRole('link', { name: 'Service', exact: true }).click();
    await page.getByRole('checkbox', { name: 'DEPLOYED' }).check();
    const list = page.getByRole('list', { name: 'Deployments' });
    await page.getByText('No deployments in these statuses.').waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('checkbox', { name: 'DEPLOYED' }).uncheck();
    await page.getByRole('checkbox', { name: 'CANCELLED' }).check();
    await list.getByText('CANCELLED', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(await list.getByRole('listitem').count()).toBe(1);

    // Redeploy it: a new deployment of the same commit, which we cancel too.
    const firstId = page.url();
    await list.getByRole('button', { name: /^Redeploy/ }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f]+$/, { timeout: UI_TIMEOUT });
    expect(page.url()).not.toBe(firstId);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(
      commit.hash.slice(0, 7),
    );
    await page.getByRole('button', { name: /^Cancel/ }).click();
    await waitForStatus(page, 'CANCELLED', UI_TIMEOUT);
    expect(errors([failedToLoad])).toEqual([]);
    await context.close();
  }, 600_000);

  it('renames a project; edits a webhook, rotates its secret, sends a test signed with the new one and redelivers it', async () => {
    const { context, page, errors } = await dashboardPage(browser());
    await signIn(page);
    await page.getByLabel('Project name').fill(`hooks ${Date.now()}`);
    await page.getByRole('button', { name: 'Create project' }).click();
    // Renamed and described in its settings: the heading and the description follow.
    const renamed = `renamed ${Date.now()}`;
    const settings = page.getByRole('form', { name: 'Project settings' });
    await settings.getByLabel('Project name').fill(renamed);
    await settings.getByLabel('Description').fill('Receives the status changes');
    await settings.getByRole('button', { name: 'Save project' }).click();
    await expectAccessible(page, renamed);
    await page.getByText('Receives the status changes', { exact: true }).first().waitFor();
    await page.getByLabel('Webhook URL').fill(`${receiver().url}/first`);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const first = (await page.getByLabel('Signing secret').textContent({ timeout: UI_TIMEOUT }))!;
    await page.getByRole('link', { name: `${receiver().url}/first` }).click();
    await expectAccessible(page, 'Webhook');

    await page.getByLabel('Webhook URL').fill(receiver().url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText(receiver().url, { exact: true }).first().waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByLabel('Signing secret');
    await page.waitForFunction(
      (old) => {
        const shown = document.querySelector('[aria-label="Signing secret"]')?.textContent;
        return shown && shown !== old;
      },
      first,
      { timeout: UI_TIMEOUT },
    );
    const secret = (await rotated.textContent())!;
    expect(secret).toMatch(/^whsec_/);

    const before = receiver().received.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const delivery = page.getByRole('list', { name: 'Deliveries' }).getByRole('listitem').first();
    await delivery.getByText('succeeded').waitFor({ timeout: UI_TIMEOUT });
    expect(receiver().received.length).toBe(before + 1);
    expect(receiver().received.at(-1)!.headers['webhook-id']).toBeDefined();
    expect(verifyStandardWebhook(secret, receiver().received.at(-1)!)).toBe(true);
    // During the rotation's overlap the previous secret signs beside the new one.
    const signatures = String(receiver().received.at(-1)!.headers['webhook-signature']);
    expect(signatures.split(' ')).toHaveLength(2);
    await page.getByText('signature with the previous secret too').waitFor();

    await delivery.locator('summary').click();
    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    await delivery.getByText('2 attempts', { exact: false }).waitFor({ timeout: UI_TIMEOUT });
    expect(receiver().received.length).toBe(before + 2);
    expect(receiver().received.at(-1)!.headers['webhook-id']).toBe(
      receiver().received.at(-2)!.headers['webhook-id'],
    );
    await expectAccessible(page, 'Webhook');
    expect(errors()).toEqual([]);
    await context.close();
  }, 300_000);
});
