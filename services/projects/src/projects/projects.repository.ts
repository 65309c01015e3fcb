import type { OutboxWriter } from '@platform/shared';
import { namedDocuments } from '../names/named-documents';
import type { ProjectDocument, ProjectModel } from './projects.model';

export interface Project {
  id: string;
  accountId: string;
  name: string;
  description: string;
  createdAt: Date;
}

const toProject = (doc: ProjectDocument): Project => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  name: doc.name,
  description: doc.description ?? '',
  createdAt: doc.createdAt,
});

/** A project's owner: every read and write names it. */
export interface ProjectOwner {
  accountId: string;
}

/** Events are written through `outbox` (the relay publishes them at once). */
export const createProjectsRepository = (model: ProjectModel, outbox: OutboxWriter) =>
  namedDocuments<ProjectDocument, ProjectOwner, Project>(model, {
    outbox,
    toEntity: toProject,
    fields: { accountId: 1, name: 1, description: 1, createdAt: 1 },
  });

export type ProjectsRepository = ReturnType<typeof createProjectsRepository>;
