import type { Request, RequestHandler } from 'express';
import { AppError, internal, notFound } from '../errors';
import { projectsClient, type InternalClient, type InternalRequest } from '../internal-client';
import { REQUEST_ID_HEADER } from '../logger';
import { accountIdOf } from './identity';

/**
 * What the projects service says the caller owns: its internal endpoints answer with this shape
 * (`GET /internal/projects/:projectId[/services/:serviceId]`), ids as the projects service
 * stores them.
 */
export interface OwnedResource {
  accountId: string;
  projectId: string;
  /** Present when a service was asked for. */
  serviceId?: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The project (and service) of the path, owned by the caller: set by requireOwnership. */
    owned?: OwnedResource;
  }
}

// Ids are opaque, but only plain ones are sent on: '..' or '/' must not reshape the internal URL.
const PLAIN_ID = /^[\w-]{1,100}$/;

/**
 * The projects service's internal path that answers whether the caller owns this project (or
 * this service of it): 404 `Project`/`Service` for an id that could reshape the URL, before
 * anyone is asked.
 */
export function ownershipPath(
  ids: { projectId?: string; serviceId?: string },
  resource: 'project' | 'service',
): string {
  const { projectId, serviceId } = ids;
  const checked = resource === 'project' ? [projectId] : [projectId, serviceId];
  if (!checked.every((id) => id !== undefined && PLAIN_ID.test(id))) {
    throw notFound(resource === 'project' ? 'Project' : 'Service');
  }
  return resource === 'project'
    ? `/internal/projects/${projectId}`
    : `/internal/projects/${projectId}/services/${serviceId}`;
}

/**
 * Asks the projects service, as the caller, at `path` (an ownershipPath, or an endpoint under
 * it that answers ownership too): another account's, a deleted or an unknown resource is 404
 * `what`; projects not answering is 503; anything else it says is our misconfiguration (500), not
 * the client's.
 */
export async function askProjectsAsOwner<T>(
  projects: InternalClient,
  path: string,
  request: InternalRequest,
  what: 'Project' | 'Service',
): Promise<T> {
  try {
    return await projects.getJson<T>(path, request);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.status === 404) throw notFound(what);
    if (err.status === 503) throw err;
    throw Object.assign(internal(), { cause: err });
  }
}

/**
 * Mounted on `/api/projects/:projectId[/services/:serviceId]/…` before a service's routes: asks
 * the projects service (at PROJECTS_URL, as the caller, signed with INTERNAL_SECRET) whether the
 * path's project (or service of that project) exists and is the caller's, each time (a deleted
 * project is 404 at once), and puts the answer on the request (`ownedOf(req)`). The errors are
 * askProjectsAsOwner's.
 */
export function requireOwnership(
  config: { PROJECTS_URL: string; INTERNAL_SECRET: string },
  resource: 'project' | 'service',
): RequestHandler {
  const projects = projectsClient(config);
  const what = resource === 'project' ? 'Project' : 'Service';
  return async (req, _res, next) => {
    const path = ownershipPath(req.params as { projectId?: string; serviceId?: string }, resource);
    req.owned = await askProjectsAsOwner<OwnedResource>(
      projects,
      path,
      { accountId: accountIdOf(req), requestId: req.get(REQUEST_ID_HEADER) },
      what,
    );
    next();
  };
}

/** The owned project (and service) of a request that passed requireOwnership. */
export function ownedOf(req: Request): OwnedResource {
  if (!req.owned) throw internal('requireOwnership is not mounted before this route.');
  return req.owned;
}
