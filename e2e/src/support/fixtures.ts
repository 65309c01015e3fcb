import { createAppRepository, FIXTURE_APP } from '@platform/shared/testing';
import { WebClient } from './client';

/** A signed-in client with a project and a service (with these settings), ready to deploy. */
export async function clientWithService(label: string, settings: Record<string, unknown> = {}) {
  const client = new WebClient();
  const login = await client.signIn(undefined, label);
  const project = await client.post('/api/projects', { name: `${label} ${Date.now()}` });
  const service = await client.post(`/api/projects/${project.body.id}/services`, {
    name: 'svc',
    ...settings,
  });
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

/**
 * A signed-in client with a project and a service whose repository is a new fixture app (one
 * commit, `commit`): what it deploys builds and answers. Close `repository` after the test.
 */
export async function clientWithApp(label: string) {
  const repository = await createAppRepository();
  const commit = await repository.commit();
  const fixture = await clientWithService(label, { repository: repository.url, ...FIXTURE_APP });
  return { ...fixture, repository, commit };
}
