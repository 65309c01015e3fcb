import type { ProjectDeletedEvent, ServiceDeletedEvent } from '../events';
import { projectsClient } from '../internal-client';

/**
 * Whether the projects service confirms a deletion event (contracts.md "Trust inside the
 * platform": a consumer acts only on what the owning service confirms). Asked as the event's
 * account: the project (or service) is deleted when projects answers 404 for it; while it still
 * answers 200 the event is not acted on (a forged or mistaken message deletes nothing). Another
 * answer (projects unreachable) throws, so the consumer retries the event later.
 */
export function deletionConfirmer(config: { PROJECTS_URL: string; INTERNAL_SECRET: string }) {
  const projects = projectsClient(config);
  return {
    async isDeleted(event: ProjectDeletedEvent | ServiceDeletedEvent): Promise<boolean> {
      const path =
        event.type === 'project.deleted'
          ? `/internal/projects/${encodeURIComponent(event.projectId)}`
          : `/internal/projects/${encodeURIComponent(event.projectId)}/services/${encodeURIComponent(event.serviceId)}`;
      return (await projects.findJson(path, { accountId: event.accountId })) === null;
    },
  };
}

export type DeletionConfirmer = ReturnType<typeof deletionConfirmer>;
