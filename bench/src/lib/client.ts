import { randomBytes } from 'node:crypto';
import { FIXTURE_APP, GatewayClient } from '@platform/shared/testing';

/**
 * A client of the gateway at `gateway`, signed in as a new person, with a project named after
 * `label` and one service in it, both made through the API.
 */
export async function clientWithService(gateway: string, label: string, serviceName: string) {
  const client = new GatewayClient(gateway);
  const accountId = (await client.signIn(uniqueEmail(label))).body.id;
  const project = await client.expect(201, 'POST', '/api/projects', {
    name: `bench ${label} ${Date.now()}`,
  });
  const service = await client.expect(201, 'POST', `/api/projects/${project.id}/services`, {
    name: serviceName,
  });
  return { client, accountId, project, service };
}

/**
 * `clientWithService`, its service `web` set to build the fixture app from `repositoryUrl`;
 * `servicePath` is the service's API path.
 */
export async function clientWithFixtureService(
  gateway: string,
  label: string,
  repositoryUrl: string,
) {
  const owner = await clientWithService(gateway, label, 'web');
  const servicePath = `/api/projects/${owner.project.id}/services/${owner.service.id}`;
  await owner.client.expect(200, 'PATCH', servicePath, {
    repository: repositoryUrl,
    ...FIXTURE_APP,
  });
  return { ...owner, servicePath };
}

export const uniqueEmail = (label: string) =>
  `bench-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;
