import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jsonContent, listQuery, listResponseSchema, readOperation } from '@platform/shared';
import { DELIVERY_STATUSES } from './deliveries/deliveries.model';
import { deliveryDetail, deliverySummary, noInputBody } from './deliveries/deliveries.schemas';
import { WEBHOOK_EVENT_TYPES } from './webhooks/webhooks.model';
import { createWebhookBody, updateWebhookBody, webhookView } from './webhooks/webhooks.schemas';

/** An http(s) URL in its plain form: host names of letters and digits, a port, a path. */
const URL_PATTERN =
  '^https?://[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)*(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~-]*)+$';

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

/**
 * The webhooks service's part of the public API document (tools/openapi assembles it): webhooks
 * and their deliveries, with the schemas the routes validate and answer with. Call after
 * extendZodWithOpenApi(z).
 */
export function registerWebhooksApi(registry: OpenAPIRegistry): void {
  const id = z.string().openapi({ description: 'Opaque identifier' });
  const timestamp = z.string().datetime().openapi({ description: 'ISO 8601 UTC timestamp' });

  const webhookFields = {
    id,
    projectId: id,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    enabled: z.boolean(),
    createdAt: timestamp,
  };
  const webhook = z.object(webhookFields).strict().openapi('Webhook');
  const webhookWithSecret = z
    .object({
      ...webhookFields,
      secret: z
        .string()
        .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
        .openapi({
          description: '`whsec_` + base64 of 32 random bytes; shown only on creation and rotation.',
        }),
    })
    .strict()
    .openapi('WebhookWithSecret');
  const webhookList = listResponseSchema('webhooks', webhook).openapi('WebhookList');

  const deliveryFields = {
    id,
    eventId: z.string().openapi({ description: 'Also the `webhook-id` header of every attempt.' }),
    type: z.string(),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description: 'A delivery stopped because its webhook was disabled is `failed`.',
    }),
    attempts: z.number().int().min(0),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: z.string().datetime().nullable(),
    createdAt: timestamp,
  };
  const delivery = z.object(deliveryFields).strict().openapi('Delivery');
  const deliveryList = listResponseSchema('deliveries', delivery).openapi('DeliveryList');
  const attempt = z
    .object({
      at: timestamp,
      statusCode: z.number().int().nullable(),
      durationMs: z.number().min(0),
      responseExcerpt: z.string().openapi({ description: 'The first 1 KiB of the answer.' }),
      error: z.string().nullable(),
    })
    .strict();
  const detail = z
    .object({
      ...deliveryFields,
      payload: z.unknown().openapi({
        type: 'object',
        description: 'The body sent on every attempt: `{type, timestamp, version, data}`.',
      }),
      attemptLog: z.array(attempt),
    })
    .strict()
    .openapi('DeliveryDetail', {
      description: "A delivery with the body sent on every attempt and each attempt's record.",
    });

  // What the routes answer is what the document says (checked by the compiler).
  const answers: [
    (...a: Parameters<typeof webhookView>) => z.infer<typeof webhook>,
    (...a: Parameters<typeof deliverySummary>) => z.infer<typeof delivery>,
    (...a: Parameters<typeof deliveryDetail>) => z.infer<typeof detail>,
  ] = [webhookView, deliverySummary, deliveryDetail];
  void answers;

  const projectParams = z.object({ projectId: z.string().openapi({ description: 'Project id' }) });
  const webhookParams = projectParams.extend({
    webhookId: z.string().openapi({ description: 'Webhook id' }),
  });
  const deliveryParams = webhookParams.extend({
    deliveryId: z.string().openapi({ description: 'Delivery id' }),
  });
  // The URL rule is WHATWG parsing plus checks no pattern states exactly; the document gives the
  // plain form every such URL can take (a name, a port, a path), and the prose the rest. The
  // bodies are the routes' own schemas with that pattern on `url`.
  const urlField = {
    pattern: URL_PATTERN,
    description:
      'http(s) only, without credentials, up to 2,048 characters. Loopback, private, shared, link-local and multicast addresses are refused, also when a name resolves to one at delivery time (unless WEBHOOK_ALLOW_PRIVATE=true). The pattern is the plain form; an IP address or other valid URL is taken as well.',
  };
  const createBody = createWebhookBody.extend({
    url: createWebhookBody.shape.url.openapi(urlField),
  });
  const updateFields = updateWebhookBody.innerType();
  const updateBody = updateFields.extend({
    url: updateFields.shape.url.openapi(urlField),
    rotateSecret: updateFields.shape.rotateSecret.openapi({
      description: 'true: a new secret is made and returned once.',
    }),
  });
  const WEBHOOKS = '/api/projects/{projectId}/webhooks';
  const WEBHOOK = `${WEBHOOKS}/{webhookId}`;
  const DELIVERY = `${WEBHOOK}/deliveries/{deliveryId}`;
  // The actions take no input: no body, or `{}`.
  const noInput = { required: false, ...jsonContent(noInputBody.unwrap()) };

  const paths: RouteConfig[] = [
    readOperation({
      path: WEBHOOKS,
      summary: "List a project's webhooks",
      tag: 'Webhooks',
      operationId: 'listWebhooks',
      params: projectParams,
      query: listQuery,
      answer: ['Without secrets', webhookList],
    }),
    {
      method: 'post',
      path: WEBHOOKS,
      summary: 'Subscribe a webhook',
      tags: ['Webhooks'],
      operationId: 'createWebhook',
      description:
        'A project has at most 20 webhooks (409 beyond, however many creates race). The secret is stored encrypted (AES-256-GCM). URLs are stored normalised (e.g. IPv4 written in decimal or hex becomes dotted). `events` defaults to `["deployment.status_changed"]`.',
      request: {
        params: projectParams,
        body: { required: true, ...jsonContent(createBody.openapi('CreateWebhook')) },
      },
      responses: {
        201: {
          description: 'The webhook with its secret, shown only here.',
          ...jsonContent(webhookWithSecret),
          // OpenAPI links: what a client can do next with the new webhook.
          links: Object.fromEntries(
            ['getWebhook', 'updateWebhook', 'deleteWebhook', 'testWebhook', 'listDeliveries'].map(
              (operationId) => [
                operationId,
                {
                  operationId,
                  parameters: {
                    projectId: '$response.body#/projectId',
                    webhookId: '$response.body#/id',
                  },
                },
              ],
            ),
          ),
        },
        409: ref('Conflict'),
      },
    },
    readOperation({
      path: WEBHOOK,
      summary: 'Get a webhook',
      tag: 'Webhooks',
      operationId: 'getWebhook',
      params: webhookParams,
      answer: ['Without its secret', webhook],
    }),
    {
      method: 'patch',
      path: WEBHOOK,
      summary: 'Update a webhook',
      tags: ['Webhooks'],
      operationId: 'updateWebhook',
      description:
        '`rotateSecret: true` makes a new secret, returned once in this answer. For an overlap window after it (24 hours by default, `WEBHOOK_SECRET_OVERLAP`), deliveries are signed with both the new and the previous secret: `webhook-signature` carries two space-separated `v1,` signatures (the new one first), so a receiver verifying with either secret accepts them; after the window, only the new secret signs. A second rotation within the window keeps only the secret it replaces as the previous one. Secrets are stored encrypted (AES-256-GCM) and never shown again. `url` follows the rules of a new webhook.',
      request: {
        params: webhookParams,
        body: {
          required: true,
          ...jsonContent(updateBody.openapi('UpdateWebhook', { minProperties: 1 })),
        },
      },
      responses: {
        200: {
          description: 'The webhook; with a new `secret` only when rotated.',
          ...jsonContent(z.union([webhook, webhookWithSecret])),
        },
        409: ref('Conflict'),
      },
    },
    {
      method: 'delete',
      path: WEBHOOK,
      summary: 'Delete a webhook',
      tags: ['Webhooks'],
      operationId: 'deleteWebhook',
      request: { params: webhookParams },
      responses: { 204: { description: 'Deleted' } },
    },
    {
      method: 'post',
      path: `${WEBHOOK}/test`,
      summary: 'Send a test event',
      tags: ['Webhooks'],
      operationId: 'testWebhook',
      description: '409 CONFLICT when the webhook is disabled: enable it first.',
      request: { params: webhookParams, body: noInput },
      responses: {
        202: { description: 'A `webhook.test` event is queued for delivery.' },
        409: ref('Conflict'),
      },
    },
    {
      method: 'get',
      path: `${WEBHOOK}/deliveries`,
      summary: "A webhook's delivery log",
      tags: ['Webhooks'],
      operationId: 'listDeliveries',
      request: { params: webhookParams, query: listQuery },
      responses: {
        200: {
          description: 'Newest first; without `limit` the newest 20.',
          ...jsonContent(deliveryList),
          links: Object.fromEntries(
            ['getDelivery', 'redeliver'].map((operationId) => [
              operationId,
              {
                operationId,
                parameters: {
                  projectId: '$request.path.projectId',
                  webhookId: '$request.path.webhookId',
                  deliveryId: '$response.body#/deliveries/0/id',
                },
              },
            ]),
          ),
        },
      },
    },
    readOperation({
      path: DELIVERY,
      summary: 'One delivery with its attempts',
      tag: 'Webhooks',
      operationId: 'getDelivery',
      params: deliveryParams,
      answer: ['The delivery', detail],
    }),
    {
      method: 'post',
      path: `${DELIVERY}/redeliver`,
      summary: 'Deliver an event again',
      tags: ['Webhooks'],
      operationId: 'redeliver',
      description:
        '409 CONFLICT while the webhook is disabled or an attempt of this delivery is running. Redelivering a delivery that waits for a retry makes that retry happen now; a finished one gets one more attempt, without retries.',
      request: { params: deliveryParams, body: noInput },
      responses: {
        202: {
          description: 'A new attempt of the same event, with the same `webhook-id` and body.',
        },
        409: ref('Conflict'),
      },
    },
  ];
  for (const path of paths) registry.registerPath(path);
}
