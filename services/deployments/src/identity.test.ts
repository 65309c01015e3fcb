import { errorBody, identityHeaders, requestJson } from '@platform/shared/testing';
import { asOwner, useHarness } from './test/harness';

// docs/architecture.md, "Identity between processes": deployments accepts an identity made for
// it and for the very request (method, path and query), nothing else.
const h = useHarness();

describe('the identity deployments accepts', () => {
  it("refuses the owner's identity made for projects or for webhooks, and asks projects nothing", async () => {
    const service = h.projects.addService();
    const before = h.projects.calls.length;

    for (const audience of ['projects', 'webhooks'] as const) {
      const res = await requestJson(h.api.path(service), {
        identity: { ...asOwner(service), audience },
      });

      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('UNAUTHORIZED'));
    }
    expect(h.projects.calls.length).toBe(before);
    // The same account, with an identity made for deployments, is let in.
    expect((await h.api.list(service)).status).toBe(200);
  });

  it('refuses an identity made for GET on a POST to the same path: nothing is triggered', async () => {
    const service = h.projects.addService();
    const url = h.api.path(service);

    const res = await requestJson(url, {
      method: 'POST',
      headers: identityHeaders(asOwner(service), 'GET', url),
      body: { commitHash: 'abcdef1' },
    });

    expect(res.status).toBe(401);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(0);
  });

  it('refuses an identity made for one path on another, and on the path with another query', async () => {
    const { service, id } = await h.newDeployment();
    const madeFor = identityHeaders(asOwner(service), 'GET', h.api.path(service, `/${id}`));

    const otherPath = await requestJson(h.api.path(service), { headers: madeFor });
    const otherQuery = await requestJson(h.api.path(service, `/${id}?wait=1`), {
      headers: madeFor,
    });
    const itsOwn = await requestJson(h.api.path(service, `/${id}`), { headers: madeFor });

    expect(otherPath.status).toBe(401);
    expect(otherQuery.status).toBe(401);
    expect(itsOwn.status).toBe(200);
    expect(itsOwn.body).toMatchObject({ id });
  });
});
