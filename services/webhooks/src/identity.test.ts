import { errorBody, identityHeaders, requestJson } from '@platform/shared/testing';
import { useTestBed, type TestService } from './test/test-service';

// docs/architecture.md, "Identity between processes": webhooks accepts an identity made for it
// and for the very request (method, path and query), nothing else.
const bed = useTestBed();
// No worker runs: a webhook's url is never dialled.
const HOOK = { url: 'http://127.0.0.1:9/hook' };
let service: TestService;

beforeAll(async () => {
  service = await bed.start({ dbName: bed.newDatabase('webhooks_identity'), worker: false });
});

describe('the identity webhooks accepts', () => {
  it("refuses the owner's identity made for projects or for deployments", async () => {
    const p = bed.project(service);
    const url = `${service.url}${p.base}`;

    for (const audience of ['projects', 'deployments'] as const) {
      const res = await requestJson(url, { identity: { accountId: p.accountId, audience } });

      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('UNAUTHORIZED'));
    }
    // The same account, with an identity made for webhooks, is let in.
    expect((await p.api.get(p.base)).status).toBe(200);
  });

  it('refuses an identity made for GET on a POST to the same path: nothing is created', async () => {
    const p = bed.project(service);
    const url = `${service.url}${p.base}`;
    const madeForGet = identityHeaders(
      { accountId: p.accountId, audience: 'webhooks' },
      'GET',
      url,
    );

    const res = await requestJson(url, {
      method: 'POST',
      headers: madeForGet,
      body: HOOK,
    });

    expect(res.status).toBe(401);
    expect(await service.models.webhooks.countDocuments({ projectId: p.projectId })).toBe(0);
  });

  it('refuses an identity made for GET on a DELETE of that path, and on another path', async () => {
    const p = bed.project(service);
    const identity = { accountId: p.accountId, audience: 'webhooks' } as const;
    const created = await p.api.post(p.base, HOOK);
    expect(created.status).toBe(201);
    const webhookUrl = `${service.url}${p.base}/${created.body.id}`;
    const madeForGet = identityHeaders(identity, 'GET', webhookUrl);

    const deleted = await requestJson(webhookUrl, { method: 'DELETE', headers: madeForGet });
    const otherPath = await requestJson(`${service.url}${p.base}`, { headers: madeForGet });

    expect(deleted.status).toBe(401);
    expect(otherPath.status).toBe(401);
    expect(await service.models.webhooks.countDocuments({ projectId: p.projectId })).toBe(1);
    expect((await requestJson(webhookUrl, { headers: madeForGet })).status).toBe(200);
  });
});
