import {
  conflict,
  newEvent,
  notFound,
  outboxEntry,
  parseObjectId,
  rejectDuplicate,
  TOPICS,
  type ListQuery,
  type ProjectDeletedEvent,
} from '@platform/shared';
import type { Project, ProjectsRepository } from './projects.repository';
import type { CreateProjectBody, UpdateProjectBody } from './projects.schemas';

/** contracts.md, Validation: a quota of 1,000 projects per account. */
export const PROJECTS_PER_ACCOUNT = 1_000;

const nameTaken = (name: string) => () => conflict(`A project named "${name}" already exists.`);

export function createProjectsService(deps: { projects: ProjectsRepository }) {
  const { projects } = deps;

  /** The caller's live project, or 404 for a missing, deleted, malformed or foreign id alike. */
  async function getProject(accountId: string, projectId: string): Promise<Project> {
    const project = await projects.findLive({ accountId }, parseObjectId(projectId, 'Project'));
    if (!project) throw notFound('Project');
    return project;
  }

  async function listProjects(accountId: string, query: ListQuery) {
    return projects.listLive({ accountId }, query);
  }

  async function createProject(accountId: string, body: CreateProjectBody): Promise<Project> {
    // Two creates racing at the limit can both pass; the quota bounds lists, it is not billing.
    if ((await projects.countLive({ accountId })) >= PROJECTS_PER_ACCOUNT) {
      throw conflict(
        `An account can have at most ${PROJECTS_PER_ACCOUNT} projects: delete one to create another.`,
      );
    }
    return rejectDuplicate(projects.insert({ accountId }, body), nameTaken(body.name));
  }

  /** Changes only a live project of the caller's: another account's is 404, never a 409. */
  async function updateProject(
    accountId: string,
    projectId: string,
    body: UpdateProjectBody,
  ): Promise<Project> {
    const id = parseObjectId(projectId, 'Project');
    const project = await rejectDuplicate(
      projects.updateLive({ accountId }, id, body),
      nameTaken(body.name ?? ''),
    );
    if (!project) throw notFound('Project');
    return project;
  }

  /**
   * Marks the project deleted with its `project.deleted` event in one write, so every read is 404
   * from now on; the deletion consumer then removes its services and the document itself.
   */
  async function deleteProject(accountId: string, projectId: string): Promise<void> {
    const id = parseObjectId(projectId, 'Project');
    const event = newEvent<ProjectDeletedEvent>({
      type: 'project.deleted',
      accountId,
      projectId: id.toHexString(),
    });
    const deleted = await projects.markDeleted(
      { accountId },
      id,
      outboxEntry(TOPICS.projectDeleted, event.projectId, event),
    );
    if (!deleted) throw notFound('Project');
  }

  return { getProject, listProjects, createProject, updateProject, deleteProject };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
