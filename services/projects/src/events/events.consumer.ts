import type { Types } from 'mongoose';
import { parseObjectId, TOPICS, type Logger, type PlatformEvent } from '@platform/shared';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { ServicesRepository } from '../services/services.repository';

function objectIdOrNull(id: string): Types.ObjectId | null {
  try {
    return parseObjectId(id);
  } catch {
    return null;
  }
}

/** What the service's consumer reads (compose.ts starts it with eventHandler). */
export const CONSUMED_TOPICS = [TOPICS.projectDeleted, TOPICS.serviceDeleted];

/**
 * The second half of a DELETE: the route marked the document deleted (every read is 404 from
 * then on); this removes the documents for good. Idempotent: deleting what is gone is a no-op.
 */
export function eventHandler(deps: {
  projects: ProjectsRepository;
  services: ServicesRepository;
  logger: Logger;
}) {
  const { projects, services } = deps;
  const logger = deps.logger.child({ component: 'deletion' });
  return async (event: PlatformEvent): Promise<void> => {
    if (event.type === 'project.deleted') {
      const projectId = objectIdOrNull(event.projectId);
      if (!projectId) return logger.warn({ event }, 'ignoring a deletion of a malformed id');
      // Only a project that was deleted here loses its services: a stray or forged event
      // naming a live project must not empty it.
      if (await projects.isLive(projectId)) {
        return logger.warn({ event }, 'ignoring project.deleted for a live project');
      }
      const removed = await services.purgeOfProject(projectId);
      await projects.purgeDeleted(projectId);
      logger.info({ projectId: event.projectId, services: removed }, 'deleted project removed');
    } else if (event.type === 'service.deleted') {
      const serviceId = objectIdOrNull(event.serviceId);
      if (!serviceId) return logger.warn({ event }, 'ignoring a deletion of a malformed id');
      await services.purgeDeleted(serviceId);
      logger.info({ serviceId: event.serviceId }, 'deleted service removed');
    }
  };
}
