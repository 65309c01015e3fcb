import type { Kafka } from 'kafkajs';
import type { Connection, Types } from 'mongoose';
import {
  parseObjectId,
  startEventConsumer,
  TOPICS,
  type EventConsumer,
  type Logger,
  type PlatformEvent,
} from '@platform/shared';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { ServicesRepository } from '../services/services.repository';

function objectIdOrNull(id: string): Types.ObjectId | null {
  try {
    return parseObjectId(id);
  } catch {
    return null;
  }
}

/**
 * The second half of a DELETE: the route marked the document deleted (every read is 404 from
 * then on); this removes the documents for good. Idempotent: deleting what is gone is a no-op.
 */
export function createDeletionHandler(deps: {
  projects: ProjectsRepository;
  services: ServicesRepository;
  logger: Logger;
}) {
  const { projects, services, logger } = deps;
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

export interface DeletionConsumerOptions {
  kafka: Kafka;
  groupId: string;
  connection: Connection;
  projects: ProjectsRepository;
  services: ServicesRepository;
  logger: Logger;
  /** Default true: a new group handles every deletion still on the topics. */
  fromBeginning?: boolean;
}

export async function startDeletionConsumer(
  options: DeletionConsumerOptions,
): Promise<EventConsumer> {
  const logger = options.logger.child({ component: 'deletion' });
  // startEventConsumer also prunes the handled event ids now and then.
  return startEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [TOPICS.projectDeleted, TOPICS.serviceDeleted],
    logger,
    connection: options.connection,
    fromBeginning: options.fromBeginning,
    handle: createDeletionHandler({
      projects: options.projects,
      services: options.services,
      logger,
    }),
  });
}
