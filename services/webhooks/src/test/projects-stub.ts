import { IDENTITY_HEADER, verifyIdentity } from '@platform/shared';
import { TEST_INTERNAL_SECRET, startTestServer, type TestServer } from '@platform/shared/testing';

/**
 * The projects service's internal endpoint as webhooks sees it, over real HTTP: a project is
 * found only by its owner, and a request without a valid identity is 401.
 */
export interface ProjectsStub {
  url: string;
  calls: number;
  addProject(projectId: string, accountId: string): void;
  removeProject(projectId: string): void;
  close(): Promise<void>;
}

export async function startProjectsStub(): Promise<ProjectsStub> {
  const owners = new Map<string, string>();
  let server: TestServer | undefined;
  const stub: ProjectsStub = {
    url: '',
    calls: 0,
    addProject: (projectId, accountId) => void owners.set(projectId, accountId),
    removeProject: (projectId) => void owners.delete(projectId),
    close: () => server!.close(),
  };
  server = await startTestServer(
    (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      stub.calls++;
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const accountId = verifyIdentity(
        req.headers[IDENTITY_HEADER] as string | undefined,
        TEST_INTERNAL_SECRET,
      );
      if (!accountId) return send(401, { error: 'UNAUTHORIZED', message: 'Login is required.' });
      const match = /^\/internal\/projects\/([^/]+)$/.exec(req.url ?? '');
      const projectId = match?.[1];
      if (req.method !== 'GET' || !projectId || owners.get(projectId) !== accountId) {
        return send(404, { error: 'NOT_FOUND', message: 'Project not found.' });
      }
      send(200, { id: projectId, accountId, name: `project ${projectId}` });
    },
  );
  stub.url = server.url;
  return stub;
}
