import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jsonContent, listQuery, readOperation } from '@platform/shared';
import type { ProjectsApiSchemas } from './openapi-schemas';
import { createProjectBody, updateProjectBody } from './projects/projects.schemas';
import { putVariableBody } from './variables/variables.schemas';

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
const body = (schema: z.ZodTypeAny) => ({ required: true, ...jsonContent(schema) });
/** OpenAPI links: what a client can do next with the ids an answer gives (operationId: params). */
const links = (operations: Record<string, Record<string, string>>) => ({
  links: Object.fromEntries(
    Object.entries(operations).map(([operationId, parameters]) => [
      operationId,
      { operationId, parameters },
    ]),
  ),
});

/** Links to each of `operationIds`, all with the same `parameters`. */
const linksTo = (operationIds: string[], parameters: Record<string, string>) =>
  links(Object.fromEntries(operationIds.map((id) => [id, parameters])));

/** The projects service's operations: projects, services and variables. */
export function projectsApiPaths(s: ProjectsApiSchemas): RouteConfig[] {
  return [
    readOperation({
      path: '/api/projects',
      summary: "List the account's projects",
      tag: 'Projects',
      operationId: 'listProjects',
      query: listQuery,
      answer: ['Newest first (createdAt desc, then id).', s.projectList],
    }),
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
          ...jsonContent(s.project),
          ...linksTo(
            [
              'getProject',
              'updateProject',
              'deleteProject',
              'listServices',
              'createService',
              'listWebhooks',
              'createWebhook',
            ],
            { projectId: '$response.body#/id' },
          ),
        },
        409: ref('Conflict'),
      },
    },
    readOperation({
      path: '/api/projects/{projectId}',
      summary: 'Get a project',
      tag: 'Projects',
      operationId: 'getProject',
      description: "Unknown, malformed, deleted or another account's id: 404 NOT_FOUND.",
      params: s.projectParams,
      answer: ['The project', s.project],
    }),
    {
      method: 'patch',
      path: '/api/projects/{projectId}',
      summary: 'Update a project',
      tags: ['Projects'],
      operationId: 'updateProject',
      request: {
        params: s.projectParams,
        body: body(
          updateProjectBody.openapi('UpdateProject', {
            description: 'Either or both.',
            minProperties: 1,
          }),
        ),
      },
      responses: {
        200: { description: 'The whole updated project', ...jsonContent(s.project) },
        409: ref('Conflict'),
      },
    },
    {
      method: 'delete',
      path: '/api/projects/{projectId}',
      summary: 'Delete a project with its services, deployments and webhooks',
      tags: ['Projects'],
      operationId: 'deleteProject',
      request: { params: s.projectParams },
      responses: {
        204: {
          description:
            'Deleted. From now on every read of it, its services, deployments and webhooks is 404; the documents are removed within seconds (a `project.deleted` event). Cannot be undone.',
        },
      },
    },
    readOperation({
      path: '/api/projects/{projectId}/services',
      summary: "List a project's services",
      tag: 'Services',
      operationId: 'listServices',
      params: s.projectParams,
      query: listQuery,
      answer: ['Newest first', s.serviceList],
    }),
    {
      method: 'post',
      path: '/api/projects/{projectId}/services',
      summary: 'Create a service',
      tags: ['Services'],
      operationId: 'createService',
      description:
        'Extension of the spec (contracts.md): clients need services to deploy. Names are unique within the project and a project holds at most 1,000 services (409). The settings are validated as `CreateService` says (400 VALIDATION_ERROR with the field in `details`).',
      request: {
        params: s.projectParams,
        body: body(
          s.createBody.openapi('CreateService', {
            description:
              'A name and any of the settings; those left out take their defaults (null as well). `url` is read-only: sending it is 400.',
          }),
        ),
      },
      responses: {
        201: {
          description: 'The service',
          ...jsonContent(s.service),
          ...linksTo(
            [
              'getService',
              'updateService',
              'deleteService',
              'listVariables',
              'listDeployments',
              'triggerDeployment',
            ],
            { projectId: '$response.body#/projectId', serviceId: '$response.body#/id' },
          ),
        },
        409: ref('Conflict'),
      },
    },
    readOperation({
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Get a service',
      tag: 'Services',
      operationId: 'getService',
      params: s.serviceParams,
      answer: ['The service', s.service],
    }),
    {
      method: 'patch',
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Rename a service or change its settings',
      tags: ['Services'],
      operationId: 'updateService',
      request: {
        params: s.serviceParams,
        body: body(
          s.updateBody.openapi('UpdateService', {
            minProperties: 1,
            description:
              'The name and/or any settings; those left out are kept. null clears a setting: `repository`, `buildCommand`, `startCommand` and `dockerfilePath` to none, `branch`, `rootDirectory`, `healthCheckPath` and `replicas` back to their defaults.',
          }),
        ),
      },
      responses: {
        200: { description: 'The service', ...jsonContent(s.service) },
        409: ref('Conflict'),
      },
    },
    {
      method: 'delete',
      path: '/api/projects/{projectId}/services/{serviceId}',
      summary: 'Delete a service, its variables and its deployments',
      tags: ['Services'],
      operationId: 'deleteService',
      request: { params: s.serviceParams },
      responses: { 204: { description: 'Deleted (a `service.deleted` event).' } },
    },
    readOperation({
      path: '/api/projects/{projectId}/services/{serviceId}/variables',
      summary: "List a service's variables",
      tag: 'Services',
      operationId: 'listVariables',
      description: 'Sorted by name. Secret variables come without their value.',
      params: s.serviceParams,
      answer: ['The variables', s.variableList],
    }),
    {
      method: 'put',
      path: '/api/projects/{projectId}/services/{serviceId}/variables/{name}',
      summary: 'Create or replace a variable',
      tags: ['Services'],
      operationId: 'putVariable',
      description:
        '201 when the variable is new, 200 when it replaced one. A service holds at most 200 variables: a new one beyond is 409 CONFLICT. A deployment keeps the variables as they were at its trigger.',
      request: {
        params: s.variablePathParams,
        body: body(putVariableBody.openapi('PutVariable')),
      },
      responses: {
        200: { description: 'The variable, replaced', ...jsonContent(s.variable) },
        201: {
          description: 'The variable, new',
          ...jsonContent(s.variable),
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
      request: { params: s.variablePathParams },
      responses: { 204: { description: 'Deleted.' }, 400: ref('BadRequest') },
    },
  ];
}
