import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  extendZodWithOpenApi,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Before any registration runs: `.openapi()` on every zod schema.
extendZodWithOpenApi(z);

import { registerAuthApi } from '@platform/auth/dist/openapi';
import { registerDeploymentsApi } from '@platform/deployments/dist/openapi';
import {
  API_INFO,
  API_TAGS,
  SESSION_SECURITY,
  rateLimitedResponseOf,
  registerGatewayComponents,
  registerGatewayPaths,
} from '@platform/gateway/dist/openapi/gateway-api';
import { registerProjectsApi } from '@platform/projects/dist/openapi';
import { registerWebhooksApi } from '@platform/webhooks/dist/openapi';

type Json = Record<string, unknown>;
type Operation = Json & {
  security?: unknown[];
  parameters?: { in: string }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

/**
 * The answers the gateway gives to any /api operation, whichever service serves it: these are
 * the gateway's rules (services/gateway/src/app.ts), so they are added here, once, rather than
 * by every service.
 */
function addGatewayAnswers(path: string, method: string, operation: Operation): void {
  const add = (status: string, name: string) => {
    operation.responses[status] ??= ref(name);
  };
  const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
  const parameters = operation.parameters ?? [];
  // Bodies and query, header or path values are validated: 400 (the path's own ids are not, a
  // malformed one is 404).
  if (operation.requestBody || parameters.some((p) => p.in === 'query' || p.in === 'header')) {
    add('400', 'BadRequest');
  }
  if (!isPublic) add('401', 'Unauthorized');
  // The Origin check; the login callback's CSRF double submit.
  if (method !== 'get') add('403', 'Forbidden');
  if (parameters.some((p) => p.in === 'path')) add('404', 'NotFound');
  if (operation.requestBody) add('413', 'PayloadTooLarge');
  if (path !== '/api/openapi.json') {
    // The stricter limits (login, the expensive operations) say which in their own 429.
    add('429', rateLimitedResponseOf(method, path));
    add('503', 'ServiceUnavailable');
  }
  // Statuses in numeric order, as a reader looks for them.
  operation.responses = Object.fromEntries(
    Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)),
  );
}

/**
 * The public API document (OpenAPI 3.1) as the gateway serves it, from the schemas the services
 * validate requests and shape responses with (each service's src/openapi.ts).
 */
export function buildDocument(): Json {
  const registry = new OpenAPIRegistry();
  registerGatewayComponents(registry);
  registerAuthApi(registry);
  registerGatewayPaths(registry);
  registerProjectsApi(registry);
  registerDeploymentsApi(registry);
  registerWebhooksApi(registry);

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: API_INFO,
    servers: [{ url: '/', description: 'The gateway' }],
    security: [{ [SESSION_SECURITY]: [] }],
    tags: API_TAGS.map((name) => ({ name })),
  });
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (operation) addGatewayAnswers(path, method, operation);
    }
  }
  return document as unknown as Json;
}
