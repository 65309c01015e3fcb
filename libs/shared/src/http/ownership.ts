import type { Request, RequestHandler } from 'express';
import { AppError, internal, notFound } from '../errors';
import { createInternalClient } from '../internal-client';
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
 * Mounted on `/api/projects/:projectId[/services/:serviceId]/…` before a service's routes: asks
 * the projects service (at PROJECTS_URL, as the caller, signed with INTERNAL_SECRET), for the caller's account, whether the path's project (or service of that
 * project) exists and is theirs, each time (a deleted project is 404 at once), and puts the answer
 * on the request (`ownedOf(req)`). Another account's, a deleted or a malformed id is 404; projects
 * not answering is 503; anything else it says is our misconfiguration (500), not the client's.
 */
export function requireOwnership(
  config: { PROJECTS_URL: string; INTERNAL_SECRET: string },
  resource: 'project' | 'service',
): RequestHandler {
  const projects = createInternalClient({
    baseUrl: config.PROJECTS_URL,
    service: 'projects',
    internalSecret: config.INTERNAL_SECRET,
  });
  const what = resource === 'project' ? 'Project' : 'Service';
  return async (req, _res, next) => {
    const { projectId, serviceId } = req.params as { projectId?: string; serviceId?: string };
    const ids = resource === 'project' ? [projectId] : [projectId, serviceId];
    if (!ids.every((id) => id !== undefined && PLAIN_ID.test(id))) throw notFound(what);
    const path =
      resource === 'project'
        ? `/internal/projects/${projectId}`
        : `/internal/projects/${projectId}/services/${serviceId}`;
    try {
      req.owned = await projects.getJson<OwnedResource>(path, {
        accountId: accountIdOf(req),
        requestId: req.get(REQUEST_ID_HEADER),
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) throw notFound(what);
      if (err.status === 503) throw err;
      throw Object.assign(internal(), { cause: err });
    }
    next();
  };
}

/** The owned project (and service) of a request that passed requireOwnership. */
export function ownedOf(req: Request): OwnedResource {
  if (!req.owned) throw internal('requireOwnership is not mounted before this route.');
  return req.owned;
}
