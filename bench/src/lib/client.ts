import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
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

/** The service's `url`, once projects has learned it from the first DEPLOYED event (in 60 s). */
export async function waitForServiceUrl(
  client: GatewayClient,
  servicePath: string,
  pollMs: number,
): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const service = await client.expect(200, 'GET', servicePath);
    if (service.url) return service.url as string;
    if (Date.now() > deadline) throw new Error('the service never got its url');
    await delay(pollMs);
  }
}

export const uniqueEmail = (label: string) =>
  `bench-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;
