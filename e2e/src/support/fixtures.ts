import { WebClient } from './client';

/** A signed-in client with a project and a service, ready to deploy. */
export async function clientWithService(label: string) {
  const client = new WebClient();
  const login = await client.signIn(undefined, label);
  const project = await client.post('/api/projects', { name: `${label} ${Date.now()}` });
  const service = await client.post(`/api/projects/${project.body.id}/services`, { name: 'svc' });
  if (project.status !== 201 || service.status !== 201) {
    throw new Error(`fixture: ${project.status} ${service.status}`);
  }
  const projectPath = `/api/projects/${project.body.id}`;
  return {
    client,
    accountId: login.body.id as string,
    projectId: project.body.id as string,
    serviceId: service.body.id as string,
    projectPath,
    deploymentsPath: `${projectPath}/services/${service.body.id}/deployments`,
  };
}
