import { z } from 'zod';
import { listResponseSchema, replicasRule } from '@platform/shared';
import {
  SETTING_DESCRIPTIONS,
  createServiceBody,
  updateServiceBody,
} from './services/services.schemas';
import { variableName, variableParams } from './variables/variables.schemas';

/**
 * The schemas of the projects service's part of the API document: its answers, the service
 * bodies with the document's patterns, the path parameters. Call after extendZodWithOpenApi(z).
 */
export function projectsApiSchemas() {
  const id = z.string().openapi({ description: 'Opaque identifier' });
  const timestamp = z.string().datetime().openapi({ description: 'ISO 8601 UTC timestamp' });

  const projectListItem = z
    .object({ id, name: z.string(), createdAt: timestamp })
    .strict()
    .openapi('ProjectListItem', { description: 'A project in a list: no description.' });
  const project = z
    .object({ id, name: z.string(), description: z.string(), createdAt: timestamp })
    .strict()
    .openapi('Project');
  const projectList = listResponseSchema('projects', projectListItem).openapi('ProjectList');
  const service = z
    .object({
      id,
      projectId: id,
      name: z.string(),
      createdAt: timestamp,
      repository: z.string().url().max(2000).nullable().describe(SETTING_DESCRIPTIONS.repository),
      branch: z.string().min(1).max(255).describe(SETTING_DESCRIPTIONS.branch),
      rootDirectory: z.string().max(1000).describe(SETTING_DESCRIPTIONS.rootDirectory),
      buildCommand: z.string().max(1000).nullable().describe(SETTING_DESCRIPTIONS.buildCommand),
      startCommand: z.string().max(1000).nullable().describe(SETTING_DESCRIPTIONS.startCommand),
      healthCheckPath: z
        .string()
        .max(1000)
        .regex(/^\//)
        .describe(SETTING_DESCRIPTIONS.healthCheckPath),
      replicas: replicasRule().describe(SETTING_DESCRIPTIONS.replicas),
      dockerfilePath: z.string().max(1000).nullable().describe(SETTING_DESCRIPTIONS.dockerfilePath),
      url: z.string().url().nullable().openapi({
        readOnly: true,
        description:
          "Read-only: the absolute http(s) URL where the service's live deployment answers (locally `http://<serviceId>.localhost:8080`); null until a deployment of it is DEPLOYED; the same URL across deployments.",
      }),
    })
    .strict()
    .openapi('Service', {
      description: 'A service with every one of its settings (contracts.md, Services).',
    });
  const serviceList = listResponseSchema('services', service).openapi('ServiceList');
  const variable = z
    .object({
      name: variableName,
      value: z.string().optional().openapi({
        description: "Present only on a plain variable: a secret one's value is never returned.",
      }),
      secret: z.boolean(),
      updatedAt: timestamp,
    })
    .strict()
    .openapi('Variable');
  const variableList = z
    .object({ variables: z.array(variable).max(200) })
    .strict()
    .openapi('VariableList', { description: 'Every variable of the service, sorted by name.' });

  // A repository's rule is WHATWG parsing plus checks no pattern states exactly; the document
  // gives the plain https form (a name, a port, a path), the description the rest. The bodies
  // are the routes' own schemas with these patterns on `repository` and `branch` (the document
  // is stricter than the server there, never looser).
  const repository = (field: z.ZodTypeAny) =>
    field.openapi({
      pattern:
        '^https://[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)*(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~-]*)+$',
      description: `${SETTING_DESCRIPTIONS.repository} The pattern is the plain form; any URL these rules allow is taken.`,
    });
  // A branch name is what `git check-ref-format --branch` takes; the pattern is its plain form
  // (letters, digits, `_`, `-` in `/`-separated parts), the description says the rest.
  const branch = (field: z.ZodTypeAny) =>
    field.openapi({
      pattern: '^[A-Za-z0-9_][A-Za-z0-9_-]*(/[A-Za-z0-9_][A-Za-z0-9_-]*)*$',
      description: `${SETTING_DESCRIPTIONS.branch} Any name git takes for a branch is taken (dots too, such as \`release-1.2\`); the pattern is the plain form.`,
    });
  const createBody = createServiceBody.extend({
    repository: repository(createServiceBody.shape.repository),
    branch: branch(createServiceBody.shape.branch),
  });
  const updateBody = updateServiceBody.extend({
    repository: repository(updateServiceBody.shape.repository),
    branch: branch(updateServiceBody.shape.branch),
  });

  const projectParams = z.object({ projectId: z.string().openapi({ description: 'Project id' }) });
  const serviceParams = projectParams.extend({
    serviceId: z.string().openapi({ description: 'Service id' }),
  });
  const variablePathParams = serviceParams.merge(variableParams).openapi({});

  return {
    projectListItem,
    project,
    projectList,
    service,
    serviceList,
    variable,
    variableList,
    createBody,
    updateBody,
    projectParams,
    serviceParams,
    variablePathParams,
  };
}

export type ProjectsApiSchemas = ReturnType<typeof projectsApiSchemas>;
