import {
  errorBody,
  FIXTURE_APP,
  useAppRepository,
  useRunning,
  waitFor,
} from '@platform/shared/testing';
import { WebClient, getApp, useSignedIn, waitForDeployment } from './support/client';
import { startReceiver, verifyStandardWebhook } from './support/receiver';

/**
 * A web client's whole journey through the gateway: sign in, create a project and a service,
 * subscribe a webhook, deploy, read logs, receive signed webhooks, cancel, delete, sign out.
 */
describe('the platform, end to end through the gateway', () => {
  const alice = useSignedIn('Alice');
  const mallory = useSignedIn('Mallory');
  const receiver = useRunning(startReceiver);
  // The tenants' code: the fixture web app in a git repository on this machine (file://).
  const repository = useAppRepository();

  it('answers 401 UNAUTHORIZED saying login is required, without a session', async () => {
    const res = await new WebClient().get('/api/projects');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(errorBody('UNAUTHORIZED', /login is required/i));
  });

  it('signs in and shows the current account', async () => {
    const client = new WebClient();
    const login = await client.signIn('e2e-me@example.test', 'Me Myself');
    expect(Object.keys(login.body).sort()).toEqual(['email', 'id', 'name']);
    expect(login.body).toMatchObject({ email: 'e2e-me@example.test', name: 'Me Myself' });
    const me = await client.get('/api/accounts/me');
    expect(me.status).toBe(200);
    expect(Object.keys(me.body).sort()).toEqual(['createdAt', 'email', 'id', 'name']);
    expect(me.body.id).toBe(login.body.id);
    expect(new Date(me.body.createdAt).toISOString()).toBe(me.body.createdAt);
  });

  it('deploys a commit of a service’s repository: its url answers with that commit, and every status change is a signed webhook', async () => {
    const commit = await repository().commit({ greeting: 'hello from e2e' });
    const project = await alice.post('/api/projects', {
      name: `Shop ${Date.now()}`,
      description: 'the shop',
    });
    expect(project.status).toBe(201);
    expect(Object.keys(project.body).sort()).toEqual(['createdAt', 'description', 'id', 'name']);
    const projectPath = `/api/projects/${project.body.id}`;

    const list = await alice.get('/api/projects');
    expect(list.body.projects).toContainEqual({
      id: project.body.id,
      name: project.body.name,
      createdAt: project.body.createdAt,
    });

    const service = await alice.post(`${projectPath}/services`, {
      name: 'web',
      repository: repository().url,
      ...FIXTURE_APP,
    });
    expect(service.status).toBe(201);
    expect(service.body).toMatchObject({ projectId: project.body.id, name: 'web', url: null });

    const webhook = await alice.post(`${projectPath}/webhooks`, { url: receiver().url });
    expect(webhook.status).toBe(201);
    expect(webhook.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(webhook.body.events).toEqual(['deployment.status_changed']);

    const deploymentsPath = `${projectPath}/services/${service.body.id}/deployments`;
    const trigger = await alice.post(deploymentsPath, { commitHash: commit.hash.toUpperCase() });
    expect(trigger.status).toBe(201);
    expect(trigger.body).toEqual({
      id: expect.any(String),
      serviceId: service.body.id,
      status: 'BUILDING',
      commitHash: commit.hash,
      createdAt: expect.any(String),
    });

    const deployment = await waitForDeployment(alice, `${deploymentsPath}/${trigger.body.id}`, [
      'DEPLOYED',
      'FAILED',
    ]);
    if (deployment.status !== 'DEPLOYED') console.log(deployment.logs);
    expect(deployment.status).toBe('DEPLOYED');
    expect(deployment.logs).toContain(`built revision ${commit.revision}`);
    expect(deployment.logs).toContain("==> the service's URL now serves this deployment");
    // The service's url, through the gateway, answers with the commit that was built.
    const url = await waitFor(
      async () => (await alice.get(`${projectPath}/services/${service.body.id}`)).body.url,
      { what: 'the service to learn its url' },
    );
    expect(url).toMatch(new RegExp(`^http://${service.body.id}\\.localhost:\\d+$`));
    const app = await getApp(url);
    expect(app.status).toBe(200);
    expect(JSON.parse(app.body)).toMatchObject({
      commit: commit.revision,
      greeting: 'hello from e2e',
    });
    expect(new Date(deployment.deployedAt).getTime()).toBeGreaterThanOrEqual(
      new Date(deployment.createdAt).getTime(),
    );

    const listed = await alice.get(deploymentsPath);
    const item = listed.body.deployments.find((d: any) => d.id === trigger.body.id);
    expect(Object.keys(item).sort()).toEqual([
      'commitHash',
      'commitMessage',
      'createdAt',
      'deployedAt',
      'id',
      'serviceId',
      'status',
    ]);

    const hooks = await waitFor(
      () => {
        const mine = receiver().received.filter(
          (w) => w.body.data?.deploymentId === trigger.body.id,
        );
        return mine.length >= 3 ? mine : null;
      },
      { timeoutMs: 20_000, what: 'three webhooks for the deployment' },
    );
    expect(hooks.map((w) => w.body.data.status)).toEqual(['BUILDING', 'DEPLOYING', 'DEPLOYED']);
    expect(new Set(hooks.map((w) => w.headers['webhook-id'])).size).toBe(3);
    for (const hook of hooks) {
      expect(verifyStandardWebhook(webhook.body.secret, hook)).toBe(true);
      expect(
        verifyStandardWebhook(`whsec_${Buffer.from('another key').toString('base64')}`, hook),
      ).toBe(false);
      expect(hook.body).toMatchObject({ type: 'deployment.status_changed', version: 1 });
    }

    const deliveries = await alice.get(`${projectPath}/webhooks/${webhook.body.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(
      deliveries.body.deliveries.filter((d: any) => d.status === 'succeeded').length,
    ).toBeGreaterThanOrEqual(3);
  });

  it('cancels a running build and refuses a second cancel', async () => {
    const project = await alice.post('/api/projects', { name: `Cancel ${Date.now()}` });
    const service = await alice.post(`/api/projects/${project.body.id}/services`, {
      name: 'worker',
      repository: repository().url,
      ...FIXTURE_APP,
      buildCommand: 'sleep 60',
    });
    const deploymentsPath = `/api/projects/${project.body.id}/services/${service.body.id}/deployments`;
    const commit = await repository().commit({ message: 'a slow build' });
    const trigger = await alice.post(deploymentsPath, { commitHash: commit.hash });
    expect(trigger.status).toBe(201);

    const cancel = await alice.post(`${deploymentsPath}/${trigger.body.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ id: trigger.body.id, status: 'CANCELLED' });
    const again = await alice.post(`${deploymentsPath}/${trigger.body.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('CONFLICT');
    expect((await alice.get(`${deploymentsPath}/${trigger.body.id}`)).body.status).toBe(
      'CANCELLED',
    );
  });

  it("keeps every one of another account's resources out of reach (404)", async () => {
    const project = await alice.post('/api/projects', { name: `Private ${Date.now()}` });
    const service = await alice.post(`/api/projects/${project.body.id}/services`, { name: 'api' });
    const deployment = await alice.post(
      `/api/projects/${project.body.id}/services/${service.body.id}/deployments`,
      {
        commitHash: 'cafebabe',
      },
    );
    const p = `/api/projects/${project.body.id}`;
    const d = `${p}/services/${service.body.id}/deployments`;
    const attempts = [
      mallory.get(p),
      mallory.patch(p, { name: 'mine now' }),
      mallory.delete(p),
      mallory.get(`${p}/services`),
      mallory.get(`${p}/services/${service.body.id}`),
      mallory.get(d),
      mallory.get(`${d}/${deployment.body.id}`),
      mallory.post(d, { commitHash: 'cafebabe' }),
      mallory.post(`${d}/${deployment.body.id}/cancel`),
      mallory.get(`${p}/webhooks`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('NOT_FOUND');
    }
    expect((await mallory.get('/api/projects')).body.projects.map((x: any) => x.id)).not.toContain(
      project.body.id,
    );
    expect((await alice.get(p)).body.name).toBe(project.body.name);
  });

  it('deletes a project with its services, deployments and webhooks: every read is 404 at once', async () => {
    const project = await alice.post('/api/projects', { name: `Doomed ${Date.now()}` });
    const p = `/api/projects/${project.body.id}`;
    const service = await alice.post(`${p}/services`, { name: 'api' });
    const d = `${p}/services/${service.body.id}/deployments`;
    const deployment = await alice.post(d, { commitHash: '1234567' });
    const webhook = await alice.post(`${p}/webhooks`, { url: receiver().url });
    expect(deployment.status).toBe(201);

    const deleted = await alice.delete(p);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    const reads = await Promise.all([
      alice.get(p),
      alice.get(`${p}/services`),
      alice.get(`${p}/services/${service.body.id}`),
      alice.get(d),
      alice.get(`${d}/${deployment.body.id}`),
      alice.get(`${p}/webhooks/${webhook.body.id}`),
    ]);
    expect(reads.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect((await alice.get('/api/projects')).body.projects.map((x: any) => x.id)).not.toContain(
      project.body.id,
    );
  });

  it('signs out: the session is gone and a replayed cookie no longer works', async () => {
    const client = new WebClient();
    await client.signIn();
    const cookie = client.cookie('platform.sid');
    expect(cookie).toBeTruthy();
    const logout = await client.post('/api/accounts/logout');
    expect(logout.status).toBe(204);
    expect(client.cookie('platform.sid')).toBeUndefined();

    const replay = new WebClient();
    replay.setCookie('platform.sid', cookie!);
    const res = await replay.get('/api/accounts/me');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('UNAUTHORIZED');
  });
});
