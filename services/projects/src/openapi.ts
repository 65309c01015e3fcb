import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { listQuery } from '@platform/shared';
import {
  createProjectBody,
  toProjectListItem,
  toProjectResponse,
  updateProjectBody,
} from './projects/projects.schemas';
import {
  SETTING_DESCRIPTIONS,
  createServiceBody,
  toServiceResponse,
  updateServiceBody,
} from './services/services.schemas';
import {
  putVariableBody,
  toVariableResponse,
  variableName,
  variableParams,
} from './variables/variables.schemas';

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: z.ZodTypeAny) => ({ content: { 'application/json': { schema } } });
const body = (schema: z.ZodTypeAny) => ({ required: true, ...json(schema) });
/** OpenAPI links: what a client can do next with the ids an answer gives (operationId: params). */
const links = (operations: Record<string, Record<string, string>>) => ({
  links: Object.fromEntries(
    Object.entries(operations).map(([operationId, parameters]) => [
      operationId,
      { operationId, parameters },
    ]),
  ),
});

/**
 * The projects service's part of the public API document (tools/openapi assembles it): projects,
 * services and variables, with the schemas the routes validate and answer with. Call after
 * extendZodWithOpenApi(z).
 */
export function registerProjectsApi(registry: OpenAPIRegistry): void {
  const id = z.string().openapi({ description: 'Opaque identifier' });
  const timestamp = z.string().datetime().openapi({ description: 'ISO 8601 UTC timestamp' });
  const nextCursor = z.string().optional().openapi({ description: 'Present when more remain.' });

  const projectListItem = z
    .object({ id, name: z.string(), createdAt: timestamp })
    .strict()
    .openapi('ProjectListItem', { description: 'A project in a list: no description.' });
  const project = z
    .object({ id, name: z.string(), description: z.string(), createdAt: timestamp })
    .strict()
    .openapi('Project');
  const projectList = z
    .object({ projects: z.array(projectListItem), nextCursor })
    .strict()
    .openapi('ProjectList');
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
  const serviceList = z
    .object({ services: z.array(service), nextCursor })
    .strict()
    .openapi('ServiceList');
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

  // What the routes answer is what the document says (checked by the compiler).
  const answers: [
    (...a: Parameters<typeof toProjectResponse>) => z.infer<typeof project>,
    (...a: Parameters<typeof toProjectListItem>) => z.infer<typeof projectListItem>,
    (...a: Parameters<typeof toServiceResponse>) => z.infer<typeof service>,
    (...a: Parameters<typeof toVariableResponse>) => z.infer<typeof variable>,
  ] = [toProjectResponse, toProjectListItem, toServiceResponse, toVariableResponse];
  void answers;

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

  const paths: RouteConfig[] = [
    {
      method: 'get',
      path: '/api/projects',
      summary: "List the account's projects",
      tags: ['Projects'],
      operationId: 'listProjects',
      request: { query: listQuery },
      responses: {
        200: { description: 'Newest first (createdAt desc, then id).', ...json(projectList) },
      },
    },
    {
      method: 'post',
      path: '/api/projects',
      summary: 'Create a project',
      tags: ['Projects'],
      operationId: 'createProject',
      description:
        '409 CONFLICT when the name is taken (case-insensitively) or the account has reached its quota of 1,000 projects.',
      request: { body: body(createProjectBody.openapi('CreateProject')) },
      responses: {
        201: {
          description: 'The project',
          ...json(project),
          ...links(
            Object.fromEntries(
              [
                'getProject',
                'updateProject',
                'deleteProject',
                'listServices',
                'createService',
                'listWebhooks',
                'createWebhook',
              ].map((id) => [id, { projectId: '$response.body#/id' }]),
            ),
          ),
        },
        409: ref('Conflict'),
      },
    },
    {
      method: 'get',
      path: '/api/projects/{projectId}',
      summary: 'Get a project',
      tags: ['Projects'],
      operationId: 'getProject',
      description: "Unknown, malformed, deleted or another account's id: 404 NOT_FOUND.",
      request: { params: projectParams },
      responses: { 200: { description: 'The project', ...json(project) } },
    },
    {
      method: 'patch',
      path: '/api/projects/{projectId}',
      summary: 'Update a project',
      tags: ['Projects'],
      operationId: 'updateProject',
      request: {
        params: projectParams,
        body: body(
          updateProjectBody.openapi('UpdateProject', {
            description: 'Either or both.',
            minProperties: 1,
          }),
        ),
      },
      responses: {
        200: { description: 'The whole updated project', ...json(project) },
        409: ref('Conflict'),
      },
    },
    {
      method: 'delete',
      path: '/api/projects/{projectId}',
      summary: 'Delete a project with its services, deployments and webhooks',
      tags: ['Projects'],
      operationId: 'deleteProject',
      request: { params: projectParams },
      responses: {
        204: {
          description:
            'Deleted. From now on every read of it, its services, deployments and webhooks is 404; the documents are removed within seconds (a `project.deleted` event). Cannot be undone.',
        },
      },
    },
    {
      method: 'get',
      path: '/api/projects/{projectId}/services',
      summary: "List a project's services",
      tags: ['Services'],
      operationId: 'listServices',
      request: { params: projectParams, query: listQuery },
      responses: { 200: { description: 'Newest first', ...json(serviceList) } },
    },
    {
      method: 'post',
      path: '/api/projects/{projectId}/services',
      summary: 'Create a service',
      tags: ['Services'],
      operationId: 'createService',
      description:
        'Extension of the spec (contracts.md): clients need services to deploy. Names are unique within the project and a project holds at most 1,000 services (409). The settings are validated as `CreateService` says (400 VALIDATION_ERROR with the field in `details`).',
      request: {
        params: projectParams,
        body: body(
          createBody.openapi('CreateService', {
            description:
              'A name and any of the settings; those left out take their defaults (null as well). `url` is read-only: sending it is 400.',
          }),
        ),
      },
      responses: {
        201: {
          description: 'The service',
          ...json(service),
          ...links(
            Object.fromEntries(
              [
                'getService',
                'updateService',
                'deleteService',
                'listVariables',
                'listDeployments',
                'triggerDeployment',
              ].map((id) => [
                id,
                { projectId: '$response.body#/projectId', serviceId: '$response.body#/id' },
              ]),
            ),
          ),
        },
        409: ref('Conflict'),
      },
    },
    {
      method: 'get',
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Get a service',
      tags: ['Services'],
      operationId: 'getService',
      request: { params: serviceParams },
      responses: { 200: { description: 'The service', ...json(service) } },
    },
    {
      method: 'patch',
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Rename a service or change its settings',
      tags: ['Services'],
      operationId: 'updateService',
      request: {
        params: serviceParams,
        body: body(
          updateBody.openapi('UpdateService', {
            minProperties: 1,
            description:
              'The name and/or any settings; those left out are kept. null clears a setting: `repository`, `buildCommand` and `startCommand` to none, `branch`, `rootDirectory` and `healthCheckPath` back to their defaults.',
          }),
        ),
      },
      responses: { 200: { description: 'The service', ...json(service) }, 409: ref('Conflict') },
    },
    {
      method: 'delete',
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Delete a service, its variables and its deployments',
      tags: ['Services'],
      operationId: 'deleteService',
      request: { params: serviceParams },
      responses: { 204: { description: 'Deleted (a `service.deleted` event).' } },
    },
    {
      method: 'get',
      path: '/api/projects/{projectId}/services/{serviceId}/variables',
      summary: "List a service's variables",
      tags: ['Services'],
      operationId: 'listVariables',
      description: 'Sorted by name. Secret variables come without their value.',
      request: { params: serviceParams },
      responses: { 200: { description: 'The variables', ...json(variableList) } },
    },
    {
      method: 'put',
      path: '/api/projects/{projectId}/services/{serviceId}/variables/{name}',
      summary: 'Create or replace a variable',
      tags: ['Services'],
      operationId: 'putVariable',
      description:
        '201 when the variable is new, 200 when it replaced one. A service holds at most 200 variables: a new one beyond is 409 CONFLICT. A deployment keeps the variables as they were at its trigger.',
      request: {
        params: variablePathParams,
        body: body(putVariableBody.openapi('PutVariable')),
      },
      responses: {
        200: { description: 'The variable, replaced', ...json(variable) },
        201: {
          description: 'The variable, new',
          ...json(variable),
          ...links({
            deleteVariable: {
              projectId: '$request.path.projectId',
              serviceId: '$request.path.serviceId',
              name: '$response.body#/name',
            },
          }),
        },
        409: ref('Conflict'),
      },
    },
    {
      method: 'delete',
      path: '/api/projects/{projectId}/services/{serviceId}/variables/{name}',
      summary: 'Delete a variable',
      tags: ['Services'],
      operationId: 'deleteVariable',
      request: { params: variablePathParams },
      responses: { 204: { description: 'Deleted.' }, 400: ref('BadRequest') },
    },
  ];
  for (const path of paths) registry.registerPath(path);
}
