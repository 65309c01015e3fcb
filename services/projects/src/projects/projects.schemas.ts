import { z } from 'zod';
import { multilineText, type OwnedResource } from '@platform/shared';
import { nameSchema, toNamedResponse } from '../names/named-resources.schemas';
import type { Project } from './projects.repository';

export const DESCRIPTION_MAX_LENGTH = 2_000;

// Free text: newline and tab kept, every other control character refused (contracts.md, Trust).
const descriptionSchema = multilineText(DESCRIPTION_MAX_LENGTH).describe(
  'Up to 2,000 characters; newline and tab are kept, other control characters refused.',
);

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

/** The Project of the spec: exactly id, name, description and createdAt. */
export const toProjectResponse = (project: Project) => ({
  ...toNamedResponse(project),
  description: project.description,
});

/** An item of the project list: the spec leaves the description out. */
export const toProjectListItem = toNamedResponse;

/** The internal endpoint's answer: what requireOwnership puts on deployments' and webhooks' requests. */
export const toOwnedProject = (project: Project): OwnedResource => ({
  accountId: project.accountId,
  projectId: project.id,
});
