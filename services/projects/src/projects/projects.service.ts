import { newEvent, TOPICS, type ListQuery, type ProjectDeletedEvent } from '@platform/shared';
import { NamedResourceService } from '../names/named-resources.service';
import type { ProjectDocument } from './projects.model';
import type { Project, ProjectOwner, ProjectsRepository } from './projects.repository';
import type { CreateProjectBody, UpdateProjectBody } from './projects.schemas';

/** contracts.md, Validation: a quota of 1,000 projects per account. */
export const PROJECTS_PER_ACCOUNT = 1_000;

/** The projects of the caller's account (NamedResourceService holds what services share). */
export class ProjectsService extends NamedResourceService<ProjectDocument, ProjectOwner, Project> {
  constructor(deps: { projects: ProjectsRepository }) {
    super(deps.projects, {
      what: 'Project',
      quota: PROJECTS_PER_ACCOUNT,
      quotaReachedMessage: `An account can have at most ${PROJECTS_PER_ACCOUNT} projects: delete one to create another.`,
      nameTakenMessage: (name) => `A project named "${name}" already exists.`,
    });
  }

  getProject(accountId: string, projectId: string): Promise<Project> {
    return this.getOwned({ accountId }, projectId);
  }

  listProjects(accountId: string, query: ListQuery) {
    return this.listOwned({ accountId }, query);
  }

  createProject(accountId: string, body: CreateProjectBody): Promise<Project> {
    return this.createOwned({ accountId }, body);
  }

  updateProject(accountId: string, projectId: string, body: UpdateProjectBody): Promise<Project> {
    return this.updateOwned({ accountId }, projectId, body);
  }

  /** The deletion consumer then removes its services and the document itself. */
  deleteProject(accountId: string, projectId: string): Promise<void> {
    return this.deleteOwned({ accountId }, projectId, TOPICS.projectDeleted, (id) =>
      newEvent<ProjectDeletedEvent>({
        type: 'project.deleted',
        accountId,
        projectId: id.toHexString(),
      }),
    );
  }
}
