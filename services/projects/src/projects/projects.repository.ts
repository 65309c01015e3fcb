import { NamedResources, namedEntityOf } from '../names/named-resources.repository';
import type { ProjectDocument } from './projects.model';

export interface Project {
  id: string;
  accountId: string;
  name: string;
  description: string;
  createdAt: Date;
}

/** A project's owner: every read and write names it. */
export interface ProjectOwner {
  accountId: string;
}

/** Projects as NamedResources owned by an account. */
export class ProjectsRepository extends NamedResources<ProjectDocument, ProjectOwner, Project> {
  protected readonly entityFields = { accountId: 1, description: 1 } as const;

  protected toEntity(doc: ProjectDocument): Project {
    return { ...namedEntityOf(doc), accountId: doc.accountId, description: doc.description ?? '' };
  }
}
