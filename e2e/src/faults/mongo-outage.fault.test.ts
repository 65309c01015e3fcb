import { waitFor } from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import { infra } from '../support/infra';
import { E2E_PORTS, requireLocalStack } from '../support/stack';

const readyz = async (port: string) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

describe('the MongoDB-protocol server stopped', () => {
  beforeAll(requireLocalStack);
  afterAll(() => infra('start', 'mongo'));

  it('makes the services answer 503 and fail /readyz, and they recover without a restart', async () => {
    const { client, projectPath, deploymentsPath } = await clientWithService('Mongo outage');
    await infra('stop', 'mongo');

    const started = Date.now();
    const projects = await client.get('/api/projects');
    expect(projects.status).toBe(503);
    expect(projects.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await client.get(deploymentsPath)).status).toBe(503);
    expect((await client.get(`${projectPath}/webhooks`)).status).toBe(503);
    for (const port of [
      E2E_PORTS.AUTH_PORT,
      E2E_PORTS.PROJECTS_PORT,
      E2E_PORTS.DEPLOYMENTS_PORT,
      E2E_PORTS.WEBHOOKS_PORT,
    ]) {
      expect(await readyz(port)).toBe(503);
    }

    await infra('start', 'mongo');
    await waitFor(async () => (await client.get('/api/projects')).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'projects to answer again',
    });
    expect((await client.get(projectPath)).status).toBe(200);
    // Each service's driver finds the server again on its own schedule (its next heartbeat).
    await waitFor(async () => (await client.get(deploymentsPath)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'deployments to answer again',
    });
    for (const port of [
      E2E_PORTS.AUTH_PORT,
      E2E_PORTS.PROJECTS_PORT,
      E2E_PORTS.DEPLOYMENTS_PORT,
      E2E_PORTS.WEBHOOKS_PORT,
    ]) {
      await waitFor(async () => (await readyz(port)) === 200, {
        timeoutMs: 30_000,
        what: `readyz on ${port}`,
      });
    }
  });
});
