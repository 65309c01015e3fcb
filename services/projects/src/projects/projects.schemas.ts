import { z } from 'zod';
import { nameSchema } from '../names/name.schema';
import type { Project } from './projects.repository';

export const DESCRIPTION_MAX_LENGTH = 2_000;

const descriptionSchema = z
  .string()
  .max(DESCRIPTION_MAX_LENGTH, `must be at most ${DESCRIPTION_MAX_LENGTH} characters`);

export const createProjectBody = z
  .object({ name: nameSchema, description: descriptionSchema.default('') })
  .strict();
export type CreateProjectBody = z.infer<typeof createProjectBody>;

export const updateProjectBody = z
  .object({ name: nameSchema.optional(), description: descriptionSchema.optional() })
  .strict()
  .refine((body) => body.name !== undefined || body.description !== undefined, {
    message: 'give name, description or both',
  });
export type UpdateProjectBody = z.infer<typeof updateProjectBody>;

/** The Project of the spec: exactly these fields. */
export const toProjectResponse = (project: Project) => ({
  id: project.id,
  name: project.name,
  description: project.description,
  createdAt: project.createdAt.toISOString(),
});

/** An item of the project list: the spec leaves the description out. */
export const toProjectListItem = (project: Project) => ({
  id: project.id,
  name: project.name,
  createdAt: project.createdAt.toISOString(),
});

/** The internal endpoint's answer, for deployments and webhooks (docs/architecture.md). */
export const toInternalProject = (project: Project) => ({
  id: project.id,
  accountId: project.accountId,
  name: project.name,
});
