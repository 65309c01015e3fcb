import { randomBytes } from 'node:crypto';
import { GatewayClient } from '@platform/shared/testing';

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

export const uniqueEmail = (label: string) =>
  `bench-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;
