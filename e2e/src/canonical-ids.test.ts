import { Types } from 'mongoose';
import { connectMongo } from '@platform/shared';
import { testInfraUrls, testLogger, useRunning, waitFor } from '@platform/shared/testing';
import { useSignedIn, waitForDeployment } from './support/client';

/**
 * Ids are lower-case hexadecimal wherever they appear; a path id in another case names the same
 * resource, never a second one (contracts.md, Trust inside the platform). Through the gateway,
 * with every service real: what is created through an upper-case id is stored, listed, counted
 * and deleted under the lower-case one.
 */
describe('ids in another letter case, end to end', () => {
  const client = useSignedIn('Case');
  // The services' own databases in the e2e stack (scripts/start.sh: <stack>_<service>).
  const databases = useRunning(async () => {
    const connection = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: 'e2e_webhooks',
      logger: testLogger(),
    });
    return { connection, close: () => connection.close() };
  });
  const webhooksDb = () => databases().connection;
  const deploymentsDb = () => databases().connection.useDb('e2e_deployments');
  const upper = (path: string) => path.replace(/[0-9a-f]{24}/g, (id) => id.toUpperCase());

  async function projectWithService() {
    const project = await client.post('/api/projects', { name: `Case ${Date.now()}` });
    const service = await client.post(`/api/projects/${project.body.id}/services`, { name: 'web' });
    expect([project.status, service.status]).toEqual([201, 201]);
    return {
      projectPath: `/api/projects/${project.body.id}`,
      servicePath: `/api/projects/${project.body.id}/services/${service.body.id}`,
      projectId: project.body.id as string,
      serviceId: service.body.id as string,
    };
  }

  it('names the same project, service and deployment, answered with lower-case ids', async () => {
    const { projectPath, servicePath, projectId, serviceId } = await projectWithService();
    expect(projectId).toMatch(/^[0-9a-f]{24}$/);

    expect((await client.get(upper(projectPath))).body).toMatchObject({ id: projectId });
    expect((await client.get(upper(servicePath))).body).toMatchObject({ id: serviceId, projectId });

    const trigger = await client.post(`${upper(servicePath)}/deployments`, {
      commitHash: 'abcdef1234567',
    });
    expect(trigger.status).toBe(201);
    expect(trigger.body).toMatchObject({ serviceId });
    const deploymentPath = `${servicePath}/deployments/${trigger.body.id}`;
    expect((await client.get(upper(deploymentPath))).body).toMatchObject({
      id: trigger.body.id,
      serviceId,
    });
    const stored = await deploymentsDb()
      .collection('deployments')
      .findOne({ _id: new Types.ObjectId(trigger.body.id) });
    expect(stored).toMatchObject({ projectId, serviceId });
    const listed = await client.get(`${servicePath}/deployments`);
    expect(listed.body.deployments.map((d: { id: string }) => d.id)).toEqual([trigger.body.id]);
    await waitForDeployment(client, deploymentPath, ['DEPLOYED', 'FAILED']);
  });

  it('counts webhooks made through an upper-case project id against the same quota, and deletes them with the project', async () => {
    const { projectPath, projectId } = await projectWithService();
    const url = 'https://example.com/hook';
    for (let i = 0; i < 20; i++) {
      const path = i % 2 === 0 ? upper(projectPath) : projectPath;
      const made = await client.post(`${path}/webhooks`, { url });
      expect(made.status).toBe(201);
      expect(made.body.projectId).toBe(projectId);
    }

    const twentyFirst = await client.post(`${upper(projectPath)}/webhooks`, { url });
    expect(twentyFirst.status).toBe(409);
    const listed = await client.get(`${projectPath}/webhooks`);
    expect(listed.body.webhooks).toHaveLength(20);

    // Stored under the lower-case id only, and removed with the project.
    const stored = (projectIdAs: string) =>
      webhooksDb().collection('webhooks').countDocuments({ projectId: projectIdAs });
    expect([await stored(projectId), await stored(projectId.toUpperCase())]).toEqual([20, 0]);
    expect((await client.delete(upper(projectPath))).status).toBe(204);
    await waitFor(async () => (await stored(projectId)) === 0, {
      timeoutMs: 15_000,
      what: "the project's webhooks to be deleted with it",
    });
  });
});
