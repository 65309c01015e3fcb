import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  DEFAULT_SERVICE_SETTINGS,
  REQUEST_ID_HEADER,
  createSecretBox,
  identityOfRequest,
  variableSecretContext,
} from '@platform/shared';
import { startTestServer, TEST_INTERNAL_SECRET } from '@platform/shared/testing';
import type { ServiceSource, SourceVariable } from '../source/snapshot';

/** The key the stub seals secret variables with, as the projects service would (harness too). */
export const TEST_ENCRYPTION_KEY = `test:${Buffer.alloc(32, 7).toString('base64')}`;
const secretBox = createSecretBox({ ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });

/** A service as the projects service knows it: in a project, owned by an account. */
export interface OwnedService {
  accountId: string;
  projectId: string;
  serviceId: string;
}

/** A service's settings and variables (`secret: true` ones are sealed when handed over). */
export interface StubSource extends Omit<ServiceSource, 'variables'> {
  variables: { name: string; value: string; secret?: boolean }[];
}

/** What a service without settings answers: the contract's defaults, nothing to build or run. */
export const NO_SOURCE: StubSource = { ...DEFAULT_SERVICE_SETTINGS, variables: [] };

const newId = () => randomBytes(12).toString('hex');

export function buildService(overrides: Partial<OwnedService> = {}): OwnedService {
  return { accountId: newId(), projectId: newId(), serviceId: newId(), ...overrides };
}

export interface ProjectsCall {
  path: string;
  accountId: string | null;
  requestId: string | undefined;
}

const INTERNAL_SERVICE_PATH = /^\/internal\/projects\/([^/]+)\/services\/([^/]+)(\/source)?$/;
const INTERNAL_PROJECT_PATH = /^\/internal\/projects\/([^/]+)$/;

/**
 * The projects service's internal endpoints, answered from memory over real HTTP as the projects
 * service answers them: `{ accountId, projectId, serviceId }` for a registered service of the
 * identity's account, and its `/source` (settings, plain variables, sealed secrets); 404
 * otherwise, 401 without a valid identity header.
 */
export async function startProjectsStub() {
  const services = new Map<string, { accountId: string; source: StubSource }>();
  const calls: ProjectsCall[] = [];
  const keyOf = (projectId: string, serviceId: string) => `${projectId}/${serviceId}`;

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    // Verified as the projects service verifies it: made for projects and for this request.
    const accountId = identityOfRequest(req, TEST_INTERNAL_SECRET, 'projects');
    const requestId = req.headers[REQUEST_ID_HEADER];
    calls.push({
      path: req.url ?? '',
      accountId,
      requestId: typeof requestId === 'string' ? requestId : undefined,
    });
    if (!accountId) return send(401, { error: 'UNAUTHORIZED', message: 'Login is required.' });
    // A project exists (for its account) while one of its services is registered.
    const project = req.method === 'GET' ? INTERNAL_PROJECT_PATH.exec(req.url ?? '') : null;
    if (project) {
      const live = [...services.entries()].some(
        ([key, s]) => key.startsWith(`${project[1]}/`) && s.accountId === accountId,
      );
      return live
        ? send(200, { accountId, projectId: project[1] })
        : send(404, { error: 'NOT_FOUND', message: 'Project not found.' });
    }
    const match = req.method === 'GET' ? INTERNAL_SERVICE_PATH.exec(req.url ?? '') : null;
    const [, projectId = '', serviceId = '', source] = match ?? [];
    const found = services.get(keyOf(projectId, serviceId));
    if (!match || found?.accountId !== accountId) {
      return send(404, { error: 'NOT_FOUND', message: 'Service not found.' });
    }
    const owned = { accountId, projectId, serviceId };
    if (!source) return send(200, owned);
    const variables: SourceVariable[] = found.source.variables.map(({ name, value, secret }) =>
      secret
        ? {
            name,
            secret: true,
            sealed: secretBox.seal(value, variableSecretContext(serviceId, name)),
          }
        : { name, secret: false, value },
    );
    send(200, { ...owned, ...found.source, variables });
  };

  const server = await startTestServer(handler);
  return {
    url: server.url,
    calls,
    /**
     * How many requests about `projectId` `act` made the projects service receive (counted by
     * this server as they arrive): what one request of the deployments API costs the projects
     * service. Other projects' calls (the events of other tests on the shared Kafka, handled by
     * this service meanwhile) are not counted.
     */
    async callsDuring(
      projectId: string,
      act: () => Promise<unknown>,
    ): Promise<{ count: number; paths: string[] }> {
      const from = calls.length;
      await act();
      const prefix = `/internal/projects/${projectId}`;
      const made = calls
        .slice(from)
        .filter((c) => c.path === prefix || c.path.startsWith(`${prefix}/`));
      return { count: made.length, paths: made.map((c) => c.path) };
    },
    /** Registers a service (a new one by default) with its source, and returns it. */
    addService(
      service: OwnedService = buildService(),
      source: StubSource = NO_SOURCE,
    ): OwnedService {
      services.set(keyOf(service.projectId, service.serviceId), {
        accountId: service.accountId,
        source,
      });
      return service;
    },
    /** Changes a registered service's settings or variables (what a PATCH or PUT would do). */
    updateSource(service: OwnedService, changes: Partial<StubSource>) {
      const found = services.get(keyOf(service.projectId, service.serviceId));
      if (!found) throw new Error(`service ${service.serviceId} is not registered`);
      found.source = { ...found.source, ...changes };
    },
    /** What deleting the service in the projects service does: 404 for it from now on. */
    removeService(service: OwnedService) {
      services.delete(keyOf(service.projectId, service.serviceId));
    },
    /** What deleting the project does: 404 for it and every service of it from now on. */
    removeProject(projectId: string) {
      for (const key of [...services.keys()]) {
        if (key.startsWith(`${projectId}/`)) services.delete(key);
      }
    },
    close: () => server.close(),
  };
}

export type ProjectsStub = Awaited<ReturnType<typeof startProjectsStub>>;
