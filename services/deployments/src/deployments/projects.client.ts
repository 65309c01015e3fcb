import { AppError, internal, notFound, type InternalClient } from '@platform/shared';

export interface Caller {
  accountId: string;
  requestId?: string;
}

// Ids are opaque, but only plain ones are sent on: '..' or '/' must not reshape the URL.
const PLAIN_ID = /^[\w-]{1,100}$/;

/**
 * Asks the projects service whether the caller's account owns this service of this project
 * (it answers 404 for another account's, another project's or a deleted one). Projects down is
 * 503; anything but its 404 is our misconfiguration, not the client's problem.
 */
export function serviceOwnership(projects: InternalClient) {
  return async function assertServiceOwned(caller: Caller, projectId: string, serviceId: string) {
    if (!PLAIN_ID.test(projectId) || !PLAIN_ID.test(serviceId)) throw notFound('Service');
    try {
      await projects.getJson(`/internal/projects/${projectId}/services/${serviceId}`, caller);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) throw notFound('Service');
      if (err.status === 503) throw err;
      throw Object.assign(internal(), { cause: err });
    }
  };
}

export type AssertServiceOwned = ReturnType<typeof serviceOwnership>;
