import type { Request, RequestHandler } from 'express';
import { REQUEST_ID_HEADER, accountIdOf, notFound, type InternalClient } from '@platform/shared';

// Ids are opaque, but only these characters can be a path segment of the internal call.
const PROJECT_ID = /^[\w-]{1,100}$/;

/**
 * Mounted before every webhook route: the project must exist and belong to the caller, asked of
 * the projects service each time (a deleted project is 404 at once). Its 404 passes through;
 * projects not answering is 503.
 */
export function requireProjectAccess(projects: InternalClient): RequestHandler {
  return async (req, _res, next) => {
    const projectId = projectIdOf(req);
    if (!PROJECT_ID.test(projectId)) throw notFound('Project');
    await projects.getJson(`/internal/projects/${projectId}`, {
      accountId: accountIdOf(req),
      requestId: req.get(REQUEST_ID_HEADER),
    });
    next();
  };
}

/** The project of a request under /api/projects/:projectId (merged params of the mount path). */
export const projectIdOf = (req: Request): string =>
  String((req.params as { projectId?: string }).projectId);
