import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { IDENTITY_HEADER, REQUEST_ID_HEADER, verifyIdentity } from '@platform/shared';
import { startTestServer, TEST_INTERNAL_SECRET } from '@platform/shared/testing';

/** A service as the projects service knows it: in a project, owned by an account. */
export interface OwnedService {
  accountId: string;
  projectId: string;
  serviceId: string;
}

const newId = () => randomBytes(12).toString('hex');

export function buildService(overrides: Partial<OwnedService> = {}): OwnedService {
  return { accountId: newId(), projectId: newId(), serviceId: newId(), ...overrides };
}

export interface ProjectsCall {
  path: string;
  accountId: string | null;
  requestId: string | undefined;
}

const INTERNAL_SERVICE_PATH = /^\/internal\/projects\/([^/]+)\/services\/([^/]+)$/;

/**
 * The projects service's internal ownership endpoint, answered from memory over real HTTP as
 * the projects service answers it: `{ accountId, projectId, serviceId }` for a registered service
 * of the identity's account, 404 otherwise, 401 without a valid identity header.
 */
export async function startProjectsStub() {
  const services = new Map<string, string>();
  const calls: ProjectsCall[] = [];
  const keyOf = (projectId: string, serviceId: string) => `${projectId}/${serviceId}`;

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const identity = req.headers[IDENTITY_HEADER];
    const accountId = verifyIdentity(
      typeof identity === 'string' ? identity : undefined,
      TEST_INTERNAL_SECRET,
    );
    const requestId = req.headers[REQUEST_ID_HEADER];
    calls.push({
      path: req.url ?? '',
      accountId,
      requestId: typeof requestId === 'string' ? requestId : undefined,
    });
    if (!accountId) return send(401, { error: 'UNAUTHORIZED', message: 'Login is required.' });
    const match = req.method === 'GET' ? INTERNAL_SERVICE_PATH.exec(req.url ?? '') : null;
    const [, projectId = '', serviceId = ''] = match ?? [];
    if (!match || services.get(keyOf(projectId, serviceId)) !== accountId) {
      return send(404, { error: 'NOT_FOUND', message: 'Service not found.' });
    }
    send(200, { accountId, projectId, serviceId });
  };

  const server = await startTestServer(handler);
  return {
    url: server.url,
    calls,
    /** Registers a service (a new one by default) and returns it. */
    addService(service: OwnedService = buildService()): OwnedService {
      services.set(keyOf(service.projectId, service.serviceId), service.accountId);
      return service;
    },
    removeService(service: OwnedService) {
      services.delete(keyOf(service.projectId, service.serviceId));
    },
    close: () => server.close(),
  };
}

export type ProjectsStub = Awaited<ReturnType<typeof startProjectsStub>>;
