import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uniqueName, waitFor } from '@platform/shared/testing';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';

// Each build waits until the test lets it finish (a file named after its deployment), so a
// build stays running, holding its account's place, exactly as long as the test wants.
const gates = path.join(tmpdir(), uniqueName('account-limits'));
beforeAll(() => mkdir(gates));
afterAll(() => rm(gates, { recursive: true, force: true }));

const h = useHarness({
  pipeline: {
    TEST_BUILD: `while [ ! -e '${gates}'/"$DEPLOYMENT_ID" ]; do sleep 0.05; done; echo "built $DEPLOYMENT_ID"`,
    TEST_DEPLOY: 'echo deployed',
    PIPELINE_CONCURRENCY: '6',
    ACCOUNT_MAX_BUILDS: '2',
    ACCOUNT_MAX_APPS: '3',
  },
});

interface Triggered {
  service: OwnedService;
  id: string;
}

/** Lets the build of `d` finish. */
const finishBuild = (d: Triggered) => writeFile(path.join(gates, d.id), '');

/** A deployment of a new service of the account (or of `service` when given). */
async function trigger(accountId: string, service?: OwnedService): Promise<Triggered> {
  const owned = service ?? h.projects.addService(buildService({ accountId }));
  const res = await h.api.trigger(owned, { commitHash: newCommitHash() });
  expect(res.status).toBe(201);
  return { service: owned, id: res.body.id as string };
}

const isHeld = async (d: Triggered) => (await h.lease(d.id)).leaseOwner !== null;

async function waitUntilHeld(d: Triggered) {
  await waitFor(() => isHeld(d), { what: `deployment ${d.id} to be claimed` });
}

/** Once the pipeline has passed it over for its account's limit (its log says so). */
const waitingLine = (text: string) => `==> waiting: ${text}`;

async function deployed(...ds: Triggered[]) {
  for (const d of ds) {
    await finishBuild(d);
    await h.waitForStatus(d.service, d.id, 'DEPLOYED');
  }
}

describe('per-account limits', () => {
  it('runs at most ACCOUNT_MAX_BUILDS builds of an account at once; the next waits, says why, and starts when one ends', async () => {
    const accountId = buildService().accountId;
    const first = await trigger(accountId);
    const second = await trigger(accountId);
    const third = await trigger(accountId);
    await waitUntilHeld(first);
    await waitUntilHeld(second);

    const message =
      'the account has 2 builds running (ACCOUNT_MAX_BUILDS is 2); this deployment starts when one of them ends';
    const waiting = await h.waitForLogs(third.service, third.id, waitingLine(message));
    // Another account is not held up by this one's limit.
    const other = await trigger(buildService().accountId);
    await waitUntilHeld(other);

    expect(waiting.status).toBe('BUILDING');
    expect(waiting.waiting).toEqual({ reason: 'ACCOUNT_BUILD_LIMIT', limit: 2, inUse: 2, message });
    expect(await isHeld(third)).toBe(false);
    const list = await h.api.list(third.service);
    expect(list.body.deployments[0].waiting).toEqual(waiting.waiting);
    // The ones running say nothing of waiting.
    expect((await h.api.get(first.service, first.id)).body).not.toHaveProperty('waiting');

    await deployed(first);
    await waitUntilHeld(third);
    const running = await h.api.get(third.service, third.id);
    expect(running.body.status).toBe('BUILDING');
    expect(running.body).not.toHaveProperty('waiting');
    await deployed(second, third, other);
    const logs = await h.logs(third.id);
    // Said once, before its build.
    expect(logs.split(waitingLine(message)).length).toBe(2);
    expect(logs.indexOf(waitingLine(message))).toBeLessThan(logs.indexOf('==> build step started'));
  });

  it('keeps a new service waiting at ACCOUNT_MAX_APPS live apps, never a redeploy of a live one, and starts it when a service is deleted', async () => {
    const accountId = buildService().accountId;
    const live = [await trigger(accountId), await trigger(accountId), await trigger(accountId)];
    await deployed(...live);

    const fourth = await trigger(accountId);
    const message =
      'the account has 3 apps live (ACCOUNT_MAX_APPS is 3); this deployment starts when one of them goes (a service deleted, or a deployment of a service not live yet failed or cancelled)';
    const waiting = await h.waitForLogs(fourth.service, fourth.id, waitingLine(message));
    expect(waiting.waiting).toEqual({ reason: 'ACCOUNT_APP_LIMIT', limit: 3, inUse: 3, message });
    expect(await isHeld(fourth)).toBe(false);

    // A redeploy replaces its service's app: it takes no new place.
    const redeploy = await trigger(accountId, live[0]!.service);
    await waitUntilHeld(redeploy);
    expect((await h.api.get(redeploy.service, redeploy.id)).body).not.toHaveProperty('waiting');
    await deployed(redeploy);
    expect(await isHeld(fourth)).toBe(false);

    const gone = live[1]!.service;
    await h.service.removeServiceDeployments(accountId, gone.projectId, gone.serviceId);
    await waitUntilHeld(fourth);
    await deployed(fourth);
  });

  it('counts a running build of a service with no app as its app, and frees the place when that deployment is cancelled', async () => {
    const accountId = buildService().accountId;
    const live = [await trigger(accountId), await trigger(accountId)];
    await deployed(...live);
    const building = await trigger(accountId);
    await waitUntilHeld(building);

    const next = await trigger(accountId);
    const waiting = await h.waitForLogs(
      next.service,
      next.id,
      '==> waiting: the account has 3 apps live',
    );
    expect(waiting.waiting).toMatchObject({ reason: 'ACCOUNT_APP_LIMIT', limit: 3, inUse: 3 });

    expect((await h.api.cancel(building.service, building.id)).status).toBe(200);
    await waitUntilHeld(next);
    await deployed(next);
  });
});
