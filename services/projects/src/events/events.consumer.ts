import type { Types } from 'mongoose';
import {
  parseObjectId,
  TOPICS,
  type DeploymentStatusChangedEvent,
  type Logger,
  type PlatformEvent,
} from '@platform/shared';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { ServicesRepository } from '../services/services.repository';
import type { VariablesRepository } from '../variables/variables.repository';

function objectIdOrNull(id: string): Types.ObjectId | null {
  try {
    return parseObjectId(id);
  } catch {
    return null;
  }
}

/** What the service's consumer reads (compose.ts starts it with eventHandler). */
export const CONSUMED_TOPICS = [
  TOPICS.projectDeleted,
  TOPICS.serviceDeleted,
  TOPICS.deploymentStatusChanged,
];

/** A service's stable URL: APPS_URL_TEMPLATE with its id. */
export const serviceUrlOf = (template: string, serviceId: string) =>
  template.replaceAll('{serviceId}', serviceId);

/**
 * The second half of a DELETE: the route marked the document deleted (every read is 404 from
 * then on); this removes the documents for good, the service's variables with them. Idempotent:
 * deleting what is gone is a no-op. And a service's live `url`, set when a deployment of it is
 * DEPLOYED.
 */
export function eventHandler(deps: {
  projects: ProjectsRepository;
  services: ServicesRepository;
  variables: VariablesRepository;
  appsUrlTemplate: string;
  logger: Logger;
}) {
  const { projects, services, variables } = deps;
  const logger = deps.logger.child({ component: 'events' });

  async function deploymentStatusChanged(event: DeploymentStatusChangedEvent): Promise<void> {
    if (event.status !== 'DEPLOYED') return;
    const serviceId = objectIdOrNull(event.serviceId);
    const projectId = objectIdOrNull(event.projectId);
    if (!serviceId || !projectId) return logger.warn({ event }, 'ignoring a malformed id');
    // Scoped by account and project as well as by id: an event cannot move another's service.
    const changed = await services.setLive({
      owner: { projectId, accountId: event.accountId },
      serviceId,
      deploymentId: event.deploymentId,
      url: serviceUrlOf(deps.appsUrlTemplate, event.serviceId),
      deployedAt: new Date(event.occurredAt),
    });
    logger.info(
      { serviceId: event.serviceId, deploymentId: event.deploymentId, changed },
      changed ? 'service live at its url' : 'DEPLOYED of a gone service or of an older deployment',
    );
  }

  return async (event: PlatformEvent): Promise<void> => {
    if (event.type === 'deployment.status_changed') {
      await deploymentStatusChanged(event);
    } else if (event.type === 'project.deleted') {
      const projectId = objectIdOrNull(event.projectId);
      if (!projectId) return logger.warn({ event }, 'ignoring a deletion of a malformed id');
      // Only a project that was deleted here loses its services: a stray or forged event
      // naming a live project must not empty it.
      if (await projects.isLive(projectId)) {
        return logger.warn({ event }, 'ignoring project.deleted for a live project');
      }
      const removed = await services.purgeOfProject(projectId);
      await variables.purgeOfProject(projectId);
      await projects.purgeDeleted(projectId);
      logger.info({ projectId: event.projectId, services: removed }, 'deleted project removed');
    } else if (event.type === 'service.deleted') {
      const serviceId = objectIdOrNull(event.serviceId);
      if (!serviceId) return logger.warn({ event }, 'ignoring a deletion of a malformed id');
      if (await services.isLive(serviceId)) {
        return logger.warn({ event }, 'ignoring service.deleted for a live service');
      }
      await variables.purgeOfService(serviceId);
      await services.purgeDeleted(serviceId);
      logger.info({ serviceId: event.serviceId }, 'deleted service removed');
    }
  };
}
