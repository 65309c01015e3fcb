import type { IncomingMessage, ServerResponse } from 'node:http';
import { IDENTITY_HEADER, verifyIdentity } from '@platform/shared';
import { TEST_INTERNAL_SECRET, startTestServer } from '@platform/shared/testing';

/**
 * The projects service's internal endpoint as webhooks sees it, over real HTTP: a project is
 * found only by its owner (`{ accountId, projectId }`, as the real one answers), and a request
 * without a valid identity is 401.
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
    const header = req.headers[IDENTITY_HEADER];
    const accountId = verifyIdentity(
      typeof header === 'string' ? header : undefined,
      TEST_INTERNAL_SECRET,
    );
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
