import type { ServiceSettings } from '@platform/shared';
import { requestJson, uniqueName, type JsonResponse } from '@platform/shared/testing';

/** Calls the service over HTTP as one account, as the gateway would. */
export function apiClient(baseUrl: string, accountId = uniqueName('account')) {
  const send = (method: string, path: string, body?: unknown): Promise<JsonResponse> =>
    requestJson(`${baseUrl}${path}`, {
      method,
      identity: { accountId, audience: 'projects' },
      body,
    });
  return {
    accountId,
    get: (path: string) => send('GET', path),
    post: (path: string, body?: unknown) => send('POST', path, body),
    patch: (path: string, body?: unknown) => send('PATCH', path, body),
    put: (path: string, body?: unknown) => send('PUT', path, body),
    delete: (path: string) => send('DELETE', path),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

export interface ProjectBody {
  id: string;
  name: string;
  description: string;
  createdAt: string;
}

export type ServiceSettingsBody = ServiceSettings;

export interface ServiceBody extends ServiceSettingsBody {
  id: string;
  projectId: string;
  name: string;
  createdAt: string;
  url: string | null;
}

/** Creates a project through the API; fails the test if that does not work. */
export async function buildProject(
  client: ApiClient,
  overrides: { name?: string; description?: string } = {},
): Promise<ProjectBody> {
  const response = await client.post('/api/projects', {
    name: uniqueName('project'),
    ...overrides,
  });
  if (response.status !== 201)
    throw new Error(`buildProject: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as ProjectBody;
}

/** Creates a service in `projectId` through the API; fails the test if that does not work. */
export async function buildService(
  client: ApiClient,
  projectId: string,
  overrides: { name?: string } & Partial<ServiceSettingsBody> = {},
): Promise<ServiceBody> {
  const response = await client.post(`/api/projects/${projectId}/services`, {
    name: uniqueName('service'),
    ...overrides,
  });
  if (response.status !== 201)
    throw new Error(`buildService: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as ServiceBody;
}

/** A client of a new account of the app at `baseUrl`, with a project and a service of its own. */
export async function buildAccountService(baseUrl: string) {
  const client = apiClient(baseUrl);
  const projectId = (await buildProject(client)).id;
  const serviceId = (await buildService(client, projectId)).id;
  return { client, projectId, serviceId };
}
