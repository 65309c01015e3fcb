import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { DEPLOYMENT_STATUSES, jsonContent, readOperation } from '@platform/shared';
import { WAIT_REASONS } from './deployments/deployments.model';
import {
  deploymentListQuery,
  deploymentQuery,
  idempotencyHeaders,
  logStreamHeaders,
  toDeploymentResponse,
  toListItem,
  toTriggerResponse,
  triggerBody,
} from './deployments/deployments.schemas';

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

/**
 * The deployments service's part of the public API document (tools/openapi assembles it), with
 * the schemas the routes validate and answer with. Call after extendZodWithOpenApi(z).
 */
export function registerDeploymentsApi(registry: OpenAPIRegistry): void {
  const id = z.string().openapi({ description: 'Opaque identifier' });
  const timestamp = z.string().datetime().openapi({ description: 'ISO 8601 UTC timestamp' });
  const commitHash = z
    .string()
    .regex(/^[0-9a-f]{7,64}$/)
    .openapi({ description: 'Stored lower-case.' });
  const deployedAt = z
    .string()
    .datetime()
    .optional()
    .openapi({ description: 'Only once DEPLOYED.' });

  const triggered = z
    .object({ id, serviceId: id, status: z.literal('BUILDING'), commitHash, createdAt: timestamp })
    .strict()
    .openapi('TriggeredDeployment', {
      description: "The trigger's answer: no commitMessage, deployedAt or logs.",
    });
  const waiting = z
    .object({
      reason: z.enum(WAIT_REASONS).openapi({
        description:
          '`ACCOUNT_BUILD_LIMIT`: the account has as many builds running as it may (a platform setting, ACCOUNT_MAX_BUILDS, default 2); the deployment starts when one of them ends. `ACCOUNT_APP_LIMIT`: the account has as many apps live as it may (ACCOUNT_MAX_APPS, default 10; a service counts once it has a deployment DEPLOYED or DEPLOYING or a build running); the deployment of a new service starts when a place frees: a service deleted, or a deployment of a service not live yet FAILED or CANCELLED. A deployment of a service that already counts replaces its app and never waits for this.',
      }),
      limit: z.number().int().openapi({ description: 'The limit the account is at.' }),
      inUse: z
        .number()
        .int()
        .openapi({ description: 'What the account has running (builds) or live (apps) now.' }),
      message: z.string().openapi({
        description:
          'The same in words, as its log says it (`==> waiting: the account has 2 builds running …`).',
      }),
    })
    .strict()
    .optional()
    .openapi('DeploymentWaiting', {
      description:
        'Only on a deployment still BUILDING that no build runs yet because its account is at a limit: why it waits. It waits in turn, never FAILED; without this field a BUILDING deployment runs or is next (the pipeline shares its capacity between accounts).',
    });
  const listItemFields = {
    id,
    serviceId: id,
    status: z.enum(DEPLOYMENT_STATUSES),
    commitHash,
    commitMessage: z.string(),
    createdAt: timestamp,
    deployedAt,
    waiting,
  };
  const listItem = z.object(listItemFields).strict().openapi('DeploymentListItem');
  const deployment = z
    .object({
      ...listItemFields,
      logs: z
        .string()
        .openapi({ description: 'Build and deploy output, bounded in size (oldest trimmed).' }),
    })
    .strict()
    .openapi('Deployment');
  const list = z
    .object({ deployments: z.array(listItem), nextCursor: z.string().optional() })
    .strict()
    .openapi('DeploymentList');

  // What the routes answer is what the document says (checked by the compiler).
  const answers: [
    (...a: Parameters<typeof toTriggerResponse>) => z.infer<typeof triggered>,
    (...a: Parameters<typeof toListItem>) => z.infer<typeof listItem>,
    (...a: Parameters<typeof toDeploymentResponse>) => z.infer<typeof deployment>,
  ] = [toTriggerResponse, toListItem, toDeploymentResponse];
  void answers;

  const serviceParams = z.object({
    projectId: z.string().openapi({ description: 'Project id' }),
    serviceId: z.string().openapi({ description: 'Service id' }),
  });
  const deploymentParams = serviceParams.extend({
    deploymentId: z.string().openapi({ description: 'Deployment id' }),
  });
  const DEPLOYMENTS = '/api/projects/{projectId}/services/{serviceId}/deployments';
  const DEPLOYMENT = `${DEPLOYMENTS}/{deploymentId}`;
  // OpenAPI links: what a client can do next with the new deployment.
  const next = ['getDeployment', 'cancelDeployment', 'redeployDeployment', 'rollbackDeployment'];
  const created = (description: string) => ({
    201: {
      description,
      ...jsonContent(triggered),
      links: Object.fromEntries(
        next.map((operationId) => [
          operationId,
          {
            operationId,
            parameters: {
              projectId: '$request.path.projectId',
              serviceId: '$response.body#/serviceId',
              deploymentId: '$response.body#/id',
            },
          },
        ]),
      ),
    },
    409: ref('Conflict'),
  });

  const paths: RouteConfig[] = [
    readOperation({
      path: DEPLOYMENTS,
      summary: "List a service's deployments",
      tag: 'Deployments',
      operationId: 'listDeployments',
      params: serviceParams,
      query: deploymentListQuery,
      answer: ['Newest first; without `limit` the newest 20.', list],
    }),
    {
      method: 'post',
      path: DEPLOYMENTS,
      summary: 'Trigger a deployment',
      tags: ['Deployments'],
      operationId: 'triggerDeployment',
      description:
        "Takes the service's source settings and variables as they are now (later changes do not affect this deployment). BUILDING: the platform fetches `commitHash` (with `branch`) from `repository` into a fresh workspace and runs `buildCommand` in `rootDirectory`, in a sandbox with CPU, memory, process and time limits. DEPLOYING: it starts `startCommand` from that build with `PORT` set and waits for `GET healthCheckPath` to answer 2xx or 3xx (60 s by default); then the service's `url` serves it and the previous deployment's app is stopped: DEPLOYED. No repository, a commit not in it, a failing build command or an app that never answers healthy is FAILED, the log saying why, and the previous deployment keeps serving. Newest wins: the service's older deployments still BUILDING are CANCELLED (`superseded by <id>` in their log). Per account, at most ACCOUNT_MAX_BUILDS builds run at once (default 2) and ACCOUNT_MAX_APPS services have an app live (default 10); a deployment past either waits in turn, still BUILDING, and says why in its `waiting` field and its log. Secret variables' values show as `****` in the logs.",
      request: {
        params: serviceParams,
        headers: idempotencyHeaders,
        body: {
          required: true,
          ...jsonContent(triggerBody.openapi('TriggerDeployment')),
        },
      },
      responses: created(
        "The new deployment, BUILDING. The pipeline then fetches the commit and runs the service's buildCommand, then its startCommand until the health check answers: BUILDING → DEPLOYING → DEPLOYED, or FAILED (the log says why) or CANCELLED.",
      ),
    },
    readOperation({
      path: DEPLOYMENT,
      summary: 'Get a deployment with its logs',
      tag: 'Deployments',
      operationId: 'getDeployment',
      description:
        "With `wait=N`, the answer comes as soon as the deployment is final (DEPLOYED, FAILED or CANCELLED), or after N seconds with its state then: a client (a CI job) waits for a deploy without polling. A deployment held back by its account's limits carries `waiting`, saying which.",
      params: deploymentParams,
      query: deploymentQuery,
      answer: ['The deployment', deployment],
    }),
    {
      method: 'get',
      path: `${DEPLOYMENT}/logs`,
      summary: "Follow a deployment's log",
      tags: ['Deployments'],
      operationId: 'getDeploymentLogs',
      description:
        'With `Accept: text/event-stream`, Server-Sent Events: each log line is an event `id: <line number from 1>`, `event: log`, `data: <the line>`; each status change an event `event: status`, `data: {"status": ...}` (the current status first); a comment line every 15 s while nothing happens; the stream ends after the final status. A reconnect with `Last-Event-ID: n` continues with line n+1 (lines trimmed beyond the log limit are gone); one that would get nothing new (the deployment is final and has no line after n) is 204 No Content, which stops a browser’s EventSource from reconnecting. Without that Accept header: `text/plain` with the whole log so far.',
      request: {
        params: deploymentParams,
        headers: logStreamHeaders,
      },
      responses: {
        200: {
          description: 'The log: a stream of events, or the whole log so far as text.',
          content: {
            'text/event-stream': { schema: { type: 'string' } },
            'text/plain': { schema: { type: 'string' } },
          },
        },
        204: {
          description:
            'A reconnect (`Last-Event-ID: n`, with `Accept: text/event-stream`) to a deployment that is final and has no line after n: nothing more will come. By the rules for server-sent events, a browser’s EventSource stops reconnecting at this answer.',
        },
      },
    },
    {
      method: 'post',
      path: `${DEPLOYMENT}/cancel`,
      summary: 'Cancel a deployment',
      tags: ['Deployments'],
      operationId: 'cancelDeployment',
      description: '409 CONFLICT when it is already DEPLOYED, FAILED or CANCELLED.',
      request: { params: deploymentParams },
      responses: {
        200: {
          description:
            'The deployment, CANCELLED, its log saying why (`Deployment cancelled by its owner.`, written before the status changed); a running step is stopped.',
          ...jsonContent(deployment),
        },
        409: ref('Conflict'),
      },
    },
    {
      method: 'post',
      path: `${DEPLOYMENT}/redeploy`,
      summary: 'Deploy the same commit again',
      tags: ['Deployments'],
      operationId: 'redeployDeployment',
      description:
        'A new deployment of the same `commitHash` and `commitMessage`, built again, with the variables as they are now. Honours `Idempotency-Key` like the trigger.',
      request: { params: deploymentParams, headers: idempotencyHeaders },
      responses: created('The new deployment, BUILDING.'),
    },
    {
      method: 'post',
      path: `${DEPLOYMENT}/rollback`,
      summary: 'Run the build of an earlier deployment again',
      tags: ['Deployments'],
      operationId: 'rollbackDeployment',
      description:
        "A new deployment that runs the build of `deploymentId` again, with that deployment's variables; its log says which build it reuses. Only a deployment that reached DEPLOYED, whose build is still kept (the last 10 successful builds of a service are), can be rolled back to: otherwise 409 CONFLICT. Honours `Idempotency-Key` like the trigger.",
      request: { params: deploymentParams, headers: idempotencyHeaders },
      responses: created('The new deployment, BUILDING.'),
    },
  ];
  for (const path of paths) registry.registerPath(path);
}
