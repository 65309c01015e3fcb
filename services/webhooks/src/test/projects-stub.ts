import type { IncomingMessage, ServerResponse } from 'node:http';
import { identityOfRequest, type DeploymentStatusChangedEvent } from '@platform/shared';
import { TEST_INTERNAL_SECRET, startTestServer } from '@platform/shared/testing';

/**
 * The internal endpoints webhooks asks, over real HTTP, each verifying the identity as its
 * service would (made for it and for this request; 401 otherwise):
 * - the projects service's `GET /internal/projects/:id`: a project is found only by its owner
 *   (`{ accountId, projectId }`), 404 once removed (deleted);
 * - the deployments service's `GET /internal/deployments/:id`: a recorded deployment, for its
 *   account only, as its latest recorded status change left it.
 * Both live on one server: PROJECTS_URL and DEPLOYMENTS_URL of a test service point at it.
 */
export interface ProjectsStub {
  url: string;
  addProject(projectId: string, accountId: string): void;
  /** What deleting the project in the projects service does: 404 for it from now on. */
  removeProject(projectId: string): void;
  /** What the deployments service records of the event's deployment (its status included). */
  recordDeployment(event: DeploymentStatusChangedEvent): void;
  close(): Promise<void>;
}

export async function startProjectsStub(): Promise<ProjectsStub> {
  const owners = new Map<string, string>();
  const deployments = new Map<string, DeploymentStatusChangedEvent>();
  const server = await startTestServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const deploymentId = /^\/internal\/deployments\/([^/]+)$/.exec(req.url ?? '')?.[1];
    const audience = deploymentId ? 'deployments' : 'projects';
    const accountId = identityOfRequest(req, TEST_INTERNAL_SECRET, audience);
    if (!accountId) return send(401, { error: 'UNAUTHORIZED', message: 'Login is required.' });
    if (deploymentId) {
      const d = deployments.get(deploymentId);
      if (req.method !== 'GET' || d?.accountId !== accountId) {
        return send(404, { error: 'NOT_FOUND', message: 'Deployment not found.' });
      }
      const { projectId, serviceId, commitHash, status } = d;
      return send(200, { accountId, projectId, serviceId, deploymentId, commitHash, status });
    }
    const projectId = /^\/internal\/projects\/([^/]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'GET' || !projectId || owners.get(projectId) !== accountId) {
      return send(404, { error: 'NOT_FOUND', message: 'Project not found.' });
    }
    send(200, { accountId, projectId });
  });
  return {
    url: server.url,
    addProject: (projectId, accountId) => void owners.set(projectId, accountId),
    removeProject: (projectId) => void owners.delete(projectId),
    recordDeployment: (event) => void deployments.set(event.deploymentId, event),
    close: () => server.close(),
  };
}
