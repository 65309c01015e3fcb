import { requestJson, startDroppingServer, uniqueName } from '@platform/shared/testing';
import { fakeDns } from '../test/fake-dns';
import { testSecrets } from '../test/secrets';
import { apiClient, newId, useTestBed, type TestService } from '../test/test-service';
import { MAX_WEBHOOKS_PER_PROJECT } from './webhooks.service';

// No worker runs in this file, and private addresses are refused: nothing is ever dialled.
const bed = useTestBed();
let dbName: string;
let service: TestService;

const PUBLIC_URL = 'https://hooks.example.test/platform';
const WEBHOOK_KEYS = ['createdAt', 'enabled', 'events', 'id', 'projectId', 'url'];

beforeAll(async () => {
  dbName = bed.newDatabase('webhooks_api');
  service = await bed.start({
    dbName,
    allowPrivate: false,
    worker: false,
    resolveHost: fakeDns({
      'hooks.example.test': ['93.184.215.14'],
      'other.example.test': ['2606:4700::6810:84e5'],
      localhost: ['127.0.0.1', '::1'],
      'inside.example.test': ['10.1.2.3'],
      'metadata.example.test': ['169.254.169.254'],
    }),
  });
});

const project = () => bed.project(service);
const webhooksModel = () => service.models.webhooks;
const deliveriesModel = () => service.models.deliveries;

/** The webhook's stored secret, opened as the service opens it (it is stored sealed). */
async function storedSecret(id: string) {
  const stored = await webhooksModel().findById(id).lean();
  expect(stored?.secret).toMatch(/^v1:test:/);
  return testSecrets().open({ id, secret: stored!.secret });
}

async function createWebhook(p: ReturnType<typeof project>, body: Record<string, unknown> = {}) {
  const res = await p.api.post(p.base, { url: PUBLIC_URL, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string; url: string; createdAt: string };
}

/** The id of a webhook of another project of `p`'s account. */
async function webhookOfSiblingProject(p: ReturnType<typeof project>) {
  const projectId = newId();
  bed.projects.addProject(projectId, p.accountId);
  return (await createWebhook({ ...p, base: `/api/projects/${projectId}/webhooks` })).id;
}

describe('POST /api/projects/:projectId/webhooks', () => {
  it('returns 201 with the webhook and its secret, and stores it for the caller', async () => {
    const p = project();

    const res = await p.api.post(p.base, { url: PUBLIC_URL });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([...WEBHOOK_KEYS, 'secret'].sort());
    expect(res.body).toMatchObject({
      projectId: p.projectId,
      url: PUBLIC_URL,
      events: ['deployment.status_changed'],
      enabled: true,
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    const stored = await webhooksModel().findById(res.body.id).lean();
    expect(stored).toMatchObject({
      projectId: p.projectId,
      accountId: p.accountId,
      url: PUBLIC_URL,
      enabled: true,
      events: ['deployment.status_changed'],
    });
    expect(await storedSecret(res.body.id)).toBe(res.body.secret);
  });

  it('keeps each event type asked for once and normalises the URL', async () => {
    const p = project();

    const res = await p.api.post(p.base, {
      url: 'HTTPS://Other.Example.TEST:443/a/../hook',
      events: ['deployment.status_changed', 'deployment.status_changed'],
    });

    expect(res.status).toBe(201);
    expect(res.body.events).toEqual(['deployment.status_changed']);
    expect(res.body.url).toBe('https://other.example.test/hook');
  });

  it.each([
    ['a missing url', {}, 'url'],
    ['a url that is not a string', { url: 42 }, 'url'],
    ['a relative url', { url: '/hook' }, 'url'],
    ['an ftp url', { url: 'ftp://hooks.example.test/' }, 'url'],
    ['a javascript url', { url: 'javascript:alert(1)' }, 'url'],
    ['a url with credentials', { url: 'https://user:pw@hooks.example.test/' }, 'url'],
    ['a url over 2048 characters', { url: `${PUBLIC_URL}/${'a'.repeat(2048)}` }, 'url'],
    ['an unknown event type', { url: PUBLIC_URL, events: ['deployment.created'] }, 'events.0'],
    ['the implicit test event type', { url: PUBLIC_URL, events: ['webhook.test'] }, 'events.0'],
    ['an empty event list', { url: PUBLIC_URL, events: [] }, 'events'],
    ['an unknown field', { url: PUBLIC_URL, secret: 'whsec_mine' }, 'secret'],
  ])('returns 400 VALIDATION_ERROR for %s and stores nothing', async (_case, body, path) => {
    const p = project();

    const res = await p.api.post(p.base, body);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await webhooksModel().countDocuments({ projectId: p.projectId })).toBe(0);
  });

  it('returns 400 INVALID_REQUEST for a body that is not JSON', async () => {
    const p = project();

    const res = await requestJson(`${service.url}${p.base}`, {
      method: 'POST',
      identity: { accountId: p.accountId, audience: 'webhooks' },
      headers: { 'content-type': 'text/plain' },
      body: `url=${PUBLIC_URL}`,
    });

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('INVALID_REQUEST');
  });

  it.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://2130706433/hook', 'loopback'],
    ['http://0x7f000001/hook', 'loopback'],
    ['http://0177.0.0.1/hook', 'loopback'],
    ['http://127.1/hook', 'loopback'],
    ['http://[::1]/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['http://localhost:4004/hook', 'loopback'],
    ['https://10.0.0.8/hook', 'private'],
    ['https://172.16.5.4/hook', 'private'],
    ['https://192.168.1.20/hook', 'private'],
    ['https://[fd00::5]/hook', 'private'],
    ['https://[::ffff:192.168.1.20]/hook', 'private'],
    ['https://inside.example.test/hook', 'private'],
    ['https://100.64.0.1/hook', 'shared'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://metadata.example.test/', 'link-local'],
    ['http://[fe80::1]/hook', 'link-local'],
    ['http://224.0.0.251/hook', 'multicast'],
    ['http://[ff02::1]/hook', 'multicast'],
    ['http://0.0.0.0/hook', 'unspecified'],
    ['http://0/hook', 'unspecified'],
    ['http://[::]/hook', 'unspecified'],
  ])('returns 400 VALIDATION_ERROR for %s, a %s address', async (url, kind) => {
    const p = project();

    const res = await p.api.post(p.base, { url });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: 'The request is not valid.',
      details: [
        {
          path: 'url',
          message: `refused: the destination is a ${kind} address, which webhooks may not reach`,
        },
      ],
    });
    expect(await webhooksModel().countDocuments({ projectId: p.projectId })).toBe(0);
  });

  it(`returns 409 CONFLICT when the project already has ${MAX_WEBHOOKS_PER_PROJECT} webhooks`, async () => {
    const p = project();
    for (let i = 0; i < MAX_WEBHOOKS_PER_PROJECT; i++)
      await createWebhook(p, { url: `${PUBLIC_URL}/${i}` });

    const res = await p.api.post(p.base, { url: `${PUBLIC_URL}/one-too-many` });

    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'CONFLICT',
      message: `A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks.`,
    });
    expect(await webhooksModel().countDocuments({ projectId: p.projectId })).toBe(
      MAX_WEBHOOKS_PER_PROJECT,
    );
  });
});

describe('GET /api/projects/:projectId/webhooks', () => {
  it('lists the project’s webhooks newest first, without secrets', async () => {
    const p = project();
    const first = await createWebhook(p, { url: `${PUBLIC_URL}/1` });
    const second = await createWebhook(p, { url: `${PUBLIC_URL}/2` });
    await createWebhook(project());

    const res = await p.api.get(p.base);

    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['webhooks']);
    expect(res.body.webhooks.map((w: { id: string }) => w.id)).toEqual([second.id, first.id]);
    for (const webhook of res.body.webhooks)
      expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_KEYS);
    expect(JSON.stringify(res.body)).not.toContain('whsec_');
  });

  it('pages with limit and cursor', async () => {
    const p = project();
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createWebhook(p, { url: `${PUBLIC_URL}/${i}` }));

    const page1 = await p.api.get(`${p.base}?limit=2`);
    const page2 = await p.api.get(`${p.base}?limit=2&cursor=${page1.body.nextCursor}`);

    expect(page1.body.webhooks.map((w: { id: string }) => w.id)).toEqual([
      created[2]!.id,
      created[1]!.id,
    ]);
    expect(typeof page1.body.nextCursor).toBe('string');
    expect(page2.body.webhooks.map((w: { id: string }) => w.id)).toEqual([created[0]!.id]);
    expect(page2.body.nextCursor).toBeUndefined();
  });

  it('returns 400 VALIDATION_ERROR for a limit out of range or a cursor it did not make', async () => {
    const p = project();

    const badLimit = await p.api.get(`${p.base}?limit=0`);
    const badCursor = await p.api.get(`${p.base}?cursor=not-ours`);

    expect([badLimit.status, badLimit.body.error]).toEqual([400, 'VALIDATION_ERROR']);
    expect([badCursor.status, badCursor.body.details]).toEqual([
      400,
      [{ path: 'cursor', message: 'is not a valid cursor' }],
    ]);
  });
});

describe('GET /api/projects/:projectId/webhooks/:webhookId', () => {
  it('returns the webhook without its secret', async () => {
    const p = project();
    const created = await createWebhook(p);

    const res = await p.api.get(`${p.base}/${created.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      projectId: p.projectId,
      url: PUBLIC_URL,
      events: ['deployment.status_changed'],
      enabled: true,
      createdAt: created.createdAt,
    });
  });

  it.each([
    ['an unknown id', async () => newId()],
    ['a malformed id', async () => 'not-an-id'],
    ['a webhook of another project of the same account', webhookOfSiblingProject],
  ])('returns 404 NOT_FOUND for %s', async (_case, idFor) => {
    const p = project();
    const id = await idFor(p);

    const res = await p.api.get(`${p.base}/${id}`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'NOT_FOUND', message: 'Webhook not found.' });
  });
});

describe('PATCH /api/projects/:projectId/webhooks/:webhookId', () => {
  it('changes url and events and returns the whole webhook without a secret', async () => {
    const p = project();
    const created = await createWebhook(p);

    const res = await p.api.patch(`${p.base}/${created.id}`, {
      url: 'https://other.example.test/v2',
      events: ['deployment.status_changed'],
    });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      projectId: p.projectId,
      url: 'https://other.example.test/v2',
      events: ['deployment.status_changed'],
      enabled: true,
      createdAt: created.createdAt,
    });
    const stored = await webhooksModel().findById(created.id).lean();
    expect(stored?.url).toBe('https://other.example.test/v2');
    expect(await storedSecret(created.id)).toBe(created.secret);
  });

  it('rotates the secret and shows the new one only in that answer', async () => {
    const p = project();
    const created = await createWebhook(p);

    const res = await p.api.patch(`${p.base}/${created.id}`, { rotateSecret: true });
    const after = await p.api.get(`${p.base}/${created.id}`);

    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.body.secret).not.toBe(created.secret);
    expect(await storedSecret(created.id)).toBe(res.body.secret);
    expect(after.body.secret).toBeUndefined();
  });

  it('turns a webhook off, stopping its pending deliveries, and on again', async () => {
    const p = project();
    const created = await createWebhook(p);
    const test = await p.api.post(`${p.base}/${created.id}/test`);
    expect([test.status, test.body]).toEqual([202, null]);
    const [pending] = await deliveriesModel().find({ webhookId: created.id }).lean();
    expect(pending).toMatchObject({ type: 'webhook.test', status: 'pending' });

    const off = await p.api.patch(`${p.base}/${created.id}`, { enabled: false });

    expect(off.status).toBe(200);
    expect(off.body.enabled).toBe(false);
    expect(await deliveriesModel().findById(pending!._id).lean()).toMatchObject({
      status: 'failed',
      nextAttemptAt: null,
    });
    expect((await webhooksModel().findById(created.id).lean())?.disabledReason).toBe('owner');

    const on = await p.api.patch(`${p.base}/${created.id}`, { enabled: true });

    expect(on.body.enabled).toBe(true);
    expect(await webhooksModel().findById(created.id).lean()).toMatchObject({
      enabled: true,
      disabledReason: null,
      failingSince: null,
    });
  });

  it.each([
    ['an empty body', {}, '(body)'],
    ['an unknown field', { name: 'x' }, 'name'],
    ['a refused url', { url: 'http://10.0.0.1/' }, 'url'],
    ['enabled that is not a boolean', { enabled: 'yes' }, 'enabled'],
  ])('returns 400 VALIDATION_ERROR for %s and changes nothing', async (_case, body, path) => {
    const p = project();
    const created = await createWebhook(p);

    const res = await p.api.patch(`${p.base}/${created.id}`, body);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await webhooksModel().findById(created.id).lean()).toMatchObject({
      url: PUBLIC_URL,
      enabled: true,
    });
  });

  it('returns 404 NOT_FOUND for an unknown webhook', async () => {
    const p = project();

    const res = await p.api.patch(`${p.base}/${newId()}`, { enabled: false });

    expect(res.status).toBe(404);
    expect(res.body.error).toBe('NOT_FOUND');
  });
});

describe('DELETE /api/projects/:projectId/webhooks/:webhookId', () => {
  it('returns 204 and removes the webhook with its deliveries', async () => {
    const p = project();
    const created = await createWebhook(p);
    expect((await p.api.post(`${p.base}/${created.id}/test`)).status).toBe(202);

    const res = await p.api.delete(`${p.base}/${created.id}`);

    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect(await webhooksModel().findById(created.id).lean()).toBeNull();
    expect(await deliveriesModel().countDocuments({ webhookId: created.id })).toBe(0);
    expect((await p.api.delete(`${p.base}/${created.id}`)).status).toBe(404);
  });
});

describe('access to a project', () => {
  it('answers 404 NOT_FOUND on every endpoint to another account, and changes nothing', async () => {
    const owner = project();
    const created = await createWebhook(owner);
    expect((await owner.api.post(`${owner.base}/${created.id}/test`)).status).toBe(202);
    const [test] = await deliveriesModel().find({ webhookId: created.id }).lean();
    const stranger = apiClient(service.url, uniqueName('stranger'));
    const one = `${owner.base}/${created.id}`;
    const delivery = `${one}/deliveries/${test!._id.toHexString()}`;

    const answers = await Promise.all([
      stranger.post(owner.base, { url: PUBLIC_URL }),
      stranger.get(owner.base),
      stranger.get(one),
      stranger.patch(one, { enabled: false }),
      stranger.delete(one),
      stranger.post(`${one}/test`),
      stranger.get(`${one}/deliveries`),
      stranger.get(delivery),
      stranger.post(`${delivery}/redeliver`),
    ]);

    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
    }
    expect(await webhooksModel().countDocuments({ projectId: owner.projectId })).toBe(1);
    expect(await webhooksModel().findById(created.id).lean()).toMatchObject({ enabled: true });
    expect(await deliveriesModel().countDocuments({ webhookId: created.id })).toBe(1);
  });

  it('answers 404 NOT_FOUND for a project that does not exist or has an impossible id', async () => {
    const p = project();

    const unknown = await p.api.get(`/api/projects/${newId()}/webhooks`);
    const dotted = await p.api.get(`/api/projects/..%2F..%2Finternal/webhooks`);

    expect([unknown.status, unknown.body.error]).toEqual([404, 'NOT_FOUND']);
    expect([dotted.status, dotted.body.error]).toEqual([404, 'NOT_FOUND']);
  });

  it('answers 401 UNAUTHORIZED without a valid identity header', async () => {
    const p = project();

    const res = await requestJson(`${service.url}${p.base}`, {
      headers: { 'x-platform-identity': 'v1.forged.sig' },
    });

    expect(res.status).toBe(401);
    expect(res.body.error).toBe('UNAUTHORIZED');
  });

  it('answers 503 SERVICE_UNAVAILABLE when the projects service does not answer', async () => {
    const gone = await startDroppingServer();
    const orphan = await bed.start({ dbName, projectsUrl: gone.url, worker: false });
    try {
      const p = project();

      const res = await apiClient(orphan.url, p.accountId).post(p.base, { url: PUBLIC_URL });

      expect(res.status).toBe(503);
      expect(res.body.error).toBe('SERVICE_UNAVAILABLE');
      expect(await webhooksModel().countDocuments({ projectId: p.projectId })).toBe(0);
    } finally {
      await bed.stop(orphan);
      await gone.close();
    }
  });
});
