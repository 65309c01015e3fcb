import { FIXTURE_APP, openEventStream, useAppRepository, waitFor } from '@platform/shared/testing';
import { baseUrl, useSignedIn } from './support/client';

/**
 * Following a deployment through the gateway (contracts.md "Following a deployment"): the
 * session is checked when the stream opens, the events pass as they come (nothing buffered), and
 * the stream ends after the final status.
 */
describe('live logs, end to end through the gateway', () => {
  const client = useSignedIn('Follower');
  const repository = useAppRepository();

  it('streams a build’s lines while it runs, in order, and ends after DEPLOYED', async () => {
    const commit = await repository().commit();
    const project = await client.post('/api/projects', { name: `Follow ${Date.now()}` });
    const service = await client.post(`/api/projects/${project.body.id}/services`, {
      name: 'web',
      repository: repository().url,
      ...FIXTURE_APP,
      buildCommand: `sleep 1; for i in $(seq 1 20); do echo "step $i"; sleep 0.1; done; ${FIXTURE_APP.buildCommand}`,
    });
    const deployments = `/api/projects/${project.body.id}/services/${service.body.id}/deployments`;
    const trigger = await client.post(deployments, { commitHash: commit.hash });
    const path = `${deployments}/${trigger.body.id}/logs`;

    const stream = await openEventStream(`${baseUrl()}${path}`, { cookie: client.cookieHeader() });
    expect(stream.status).toBe(200);
    // The first lines arrive while the build still runs: the gateway passes them on at once.
    await waitFor(() => stream.events.some((e) => e.data === 'step 3'), { what: 'step 3' });
    expect((await client.get(`${deployments}/${trigger.body.id}`)).body.status).toBe('BUILDING');
    await stream.ended;

    const lines = stream.events.filter((e) => e.event === 'log');
    expect(lines.map((e) => Number(e.id))).toEqual(lines.map((_, i) => i + 1));
    expect(lines.filter((e) => e.data.startsWith('step ')).map((e) => e.data)).toEqual(
      Array.from({ length: 20 }, (_, i) => `step ${i + 1}`),
    );
    expect(stream.events.at(-1)).toEqual({ event: 'status', data: '{"status":"DEPLOYED"}' });

    const plain = await fetch(`${baseUrl()}${path}`, {
      headers: { cookie: client.cookieHeader() },
    });
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await plain.text()).toContain('step 20\n');
  });

  it('answers 401 to a stream without a session', async () => {
    const stream = await openEventStream(
      `${baseUrl()}/api/projects/${'0'.repeat(24)}/services/${'0'.repeat(24)}/deployments/${'0'.repeat(24)}/logs`,
    );
    expect(stream.status).toBe(401);
  });
});
