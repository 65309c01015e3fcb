import type { IncomingMessage, ServerResponse } from 'node:http';
import { identityOfRequest } from '@platform/shared';
import { TEST_INTERNAL_SECRET, startTestServer } from '@platform/shared/testing';

/**
 * The projects service's internal endpoint as webhooks sees it, over real HTTP: a project is
 * found only by its owner (`{ accountId, projectId }`, as the real one answers), and a request
 * without a valid identity made for projects and this request is 401.
 */
export interface ProjectsStub {
  url: string;
  addProject(projectId: string, accountId: string): void;
  close(): Promise<void>;
}

export async function startProjectsStub(): Promise<ProjectsStub> {
  const owners = new Map<string, string>();
  const server = await startTestServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    // Verified as the projects service verifies it: made for projects and for this request.
    const accountId = identityOfRequest(req, TEST_INTERNAL_SECRET, 'projects');
    if (!accountId) return send(401, { error: 'UNAUTHORIZED', message: 'Login is required.' });
    const projectId = /^\/internal\/projects\/([^/]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'GET' || !projectId || owners.get(projectId) !== accountId) {
      return send(404, { error: 'NOT_FOUND', message: 'Project not found.' });
    }
    send(200, { accountId, projectId });
  });
  return {
    url: server.url,
    addProject: (projectId, accountId) => void owners.set(projectId, accountId),
    close: () => server.close(),
  };
}
