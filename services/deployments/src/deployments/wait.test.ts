import { errorBody, identityHeaders, requestJson, waitFor } from '@platform/shared/testing';
import { asOwner, useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';

// Status events go to Kafka, as in production: they are what wakes a waiting request.
const h = useHarness({ relay: true });

/** `GET …/:deploymentId` with a query, as `service`'s account, and how long it took. */
async function getWith(service: OwnedService, id: string, query: string) {
  const started = Date.now();
  const res = await requestJson(h.api.path(service, `/${id}${query}`), {
    identity: asOwner(service),
  });
  return { ...res, tookMs: Date.now() - started };
}

/** It answered 200 with the deployment `id` in `status`, and no request is left waiting. */
function expectAnswered(res: { status: number; body: unknown }, id: string, status: string) {
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ id, status });
  expect(h.statusWatch.size).toBe(0);
}

describe('GET …/deployments/:id?wait=N', () => {
  it('answers once the deployment is final, woken by its status event, not before', async () => {
    const { service, id } = await h.newDeployment();
    let answered = false;
    const waiting = getWith(service, id, '?wait=60').finally(() => (answered = true));
    await waitFor(() => h.statusWatch.size === 1, { what: 'the request to wait' });

    // A change that is not final wakes it; it reads DEPLOYING and waits again.
    const deploying = h.statusWatch.nextChange(id, 10_000);
    const current = await h.repository.find(service, id);
    await h.repository.changeStatus(current!, 'DEPLOYING');
    expect(await deploying.outcome).toBe('changed');
    await waitFor(() => h.statusWatch.size === 1, { what: 'the request to wait again' });
    expect(answered).toBe(false);

    const cancelled = await h.api.cancel(service, id);
    const res = await waiting;

    expect(cancelled.status).toBe(200);
    expectAnswered(res, id, 'CANCELLED');
    expect(res.tookMs).toBeLessThan(30_000);
  });

  it('answers the state it has when the time is up', async () => {
    const { service, id } = await h.newDeployment();

    const res = await getWith(service, id, '?wait=1');

    expectAnswered(res, id, 'BUILDING');
    expect(res.tookMs).toBeGreaterThanOrEqual(1_000);
  });

  it('answers a final deployment at once, without waiting', async () => {
    const { service, id } = await h.newDeployment();
    await h.api.cancel(service, id);

    const res = await getWith(service, id, '?wait=300');

    expectAnswered(res, id, 'CANCELLED');
    expect(res.tookMs).toBeLessThan(5_000);
  });

  it('forgets a waiter whose client went away', async () => {
    const { service, id } = await h.newDeployment();
    const leaving = new AbortController();
    const url = h.api.path(service, `/${id}?wait=300`);
    const waiting = fetch(url, {
      headers: identityHeaders(asOwner(service), 'GET', url),
      signal: leaving.signal,
    }).catch((err: Error) => err.name);
    await waitFor(() => h.statusWatch.size === 1, { what: 'the request to wait' });

    leaving.abort();

    expect(await waiting).toBe('AbortError');
    await waitFor(() => h.statusWatch.size === 0, { what: 'the wait to be freed' });
  });

  it.each(['0', '301', '1.5', 'soon', ''])(
    'answers 400 VALIDATION_ERROR for wait=%j',
    async (wait) => {
      const { service, id } = await h.newDeployment();
      const res = await getWith(service, id, `?wait=${wait}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ...errorBody('VALIDATION_ERROR'),
        details: [{ path: 'wait', message: expect.any(String) }],
      });
    },
  );

  it("answers 404 NOT_FOUND at once to a waiter of another account's deployment", async () => {
    const { service, id } = await h.newDeployment();
    const stranger = { ...service, accountId: buildService().accountId };
    const res = await getWith(stranger, id, '?wait=300');
    expect(res.status).toBe(404);
    expect(res.tookMs).toBeLessThan(5_000);
    expect(h.statusWatch.size).toBe(0);
  });
});
