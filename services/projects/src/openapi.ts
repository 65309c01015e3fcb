import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { projectsApiPaths } from './openapi-paths';
import { projectsApiSchemas } from './openapi-schemas';
import { toProjectListItem, toProjectResponse } from './projects/projects.schemas';
import { toServiceResponse } from './services/services.schemas';
import { toVariableResponse } from './variables/variables.schemas';

/**
 * The projects service's part of the public API document (tools/openapi assembles it): projects,
 * services and variables, with the schemas the routes validate and answer with
 * (openapi-schemas.ts) and the operations (openapi-paths.ts). Call after extendZodWithOpenApi(z).
 */
export function registerProjectsApi(registry: OpenAPIRegistry): void {
  const schemas = projectsApiSchemas();
  // What the routes answer is what the document says (checked by the compiler).
  const answers: [
    (...a: Parameters<typeof toProjectResponse>) => z.infer<typeof schemas.project>,
    (...a: Parameters<typeof toProjectListItem>) => z.infer<typeof schemas.projectListItem>,
    (...a: Parameters<typeof toServiceResponse>) => z.infer<typeof schemas.service>,
    (...a: Parameters<typeof toVariableResponse>) => z.infer<typeof schemas.variable>,
  ] = [toProjectResponse, toProjectListItem, toServiceResponse, toVariableResponse];
  void answers;

  for (const path of projectsApiPaths(schemas)) registry.registerPath(path);
}
