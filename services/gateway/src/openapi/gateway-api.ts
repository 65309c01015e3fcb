import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_CODES } from '@platform/shared';
import { RATE_LIMIT_DEFAULTS } from '../config';
import { LOGIN_PATH, LOGOUT_PATH } from '../login/auth-login';
import { expensiveOperationAt, type ExpensiveOperation } from '../rate-limit/rules';
import { OPENAPI_PATH } from './openapi.routes';

const LIMITS = RATE_LIMIT_DEFAULTS;

/** The rate limits as the document states them (docs/rate-limits.md), with their defaults. */
function rateLimitsDecision(): string {
  return [
    '- **Rate limits** (the defaults; a deployment may set others): per client IP (an IPv6 client by its /64),',
    `per session and per account: ${LIMITS.perSession} requests a minute per session and per account`,
    `(all of an account's sessions and logins together, so signing in again does not start a fresh count),`,
    `${(2 * LIMITS.perSession).toLocaleString('en-US')} per address. Login: ${LIMITS.login} attempts a minute per address before the`,
    `credential is checked, and ${LIMITS.login} logins a minute per account once it is verified (a refused`,
    'login starts no session). The expensive operations have stricter limits per account, each its own:',
    `deployments started (trigger, redeploy and rollback together) ${LIMITS.deploy} a minute, webhook test`,
    `sends ${LIMITS.webhookTest} a minute, redeliveries ${LIMITS.redeliver} a minute; a path counts however its`,
    'ids are spelled (any letter case, trailing slash). Past any limit: 429 RATE_LIMITED with `Retry-After`',
    '(seconds), and the operation is not performed. Every counted answer carries the IETF `RateLimit-Limit`,',
    '`RateLimit-Remaining` and `RateLimit-Reset` (seconds) of the limit that applies: of all the limits that',
    'counted the request, the one with the fewest requests left (of those, the one that resets last).',
  ].join(' ');
}

/** The document's `info` (tools/openapi writes the document; the gateway serves it). */
export const API_INFO = {
  title: 'Deployment Platform API',
  version: '1.0.0',
  description: [
    'The API of the hosting and deployment platform, as the gateway serves it. Paths carry no version segment.',
    '',
    "Decisions beyond the platform specification (from contracts.md and the team's own):",
    '- **Sessions**: cookie `platform.sid` (`__Host-platform.sid` over HTTPS, as in production: Secure, path `/`, no Domain), httpOnly, SameSite=Lax; 7 days of inactivity end a session (authenticated requests push cookie and server-side expiry 7 days ahead, at most every 10 minutes: the cookie is sent again when they do) and 30 days end it regardless. API keys and bearer tokens are not supported.',
    '- **Requests**: state-changing requests with a body must be `application/json` (400 INVALID_REQUEST); bodies over 100 KiB are 413; a present `Origin` header that is not allowed is 403 FORBIDDEN. Unknown body fields are 400 VALIDATION_ERROR.',
    "- **Errors**: every error is `{error, message, details?}`; never HTML. Unknown, malformed and other accounts' ids are all 404 NOT_FOUND.",
    '- **Methods**: a method a documented path does not have is 405 METHOD_NOT_ALLOWED, with `Allow` naming the ones it has.',
    rateLimitsDecision(),
    '- **Lists**: newest first, keyset paging with `limit` (1–100) and an opaque `cursor`; `nextCursor` is present when more remain.',
    '- **Dependencies**: when a service, Redis or MongoDB does not answer, 503 SERVICE_UNAVAILABLE — never an anonymous answer. A service that has as many requests waiting at the gateway as it may (`UPSTREAM_QUEUE_LIMIT`) is 503 SERVICE_UNAVAILABLE with `Retry-After` for the next.',
    '- **Webhooks**: Standard Webhooks. POST of `{type, timestamp, version: 1, data}` with `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed by the base64-decoded secret after `whsec_`). A non-2xx answer, a redirect (never followed) or a 15 s timeout is retried with backoff and jitter (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default); a 410, or 5 days of failures, disables the webhook. For `deployment.status_changed`, `data` is `{deploymentId, serviceId, projectId, status, previousStatus, commitHash}`.',
    '',
    '- **Services**: a service carries where its code comes from (`repository`, `branch`, `rootDirectory`) and how it runs (`buildCommand`, `startCommand`, `healthCheckPath`); every service answer carries them all, and the read-only `url` where its live deployment answers (null until one is DEPLOYED; the same URL across deployments). A repository is an `https://` git URL without credentials on a public host (`http://` and `file://` and private hosts only on a local stack, `SOURCE_ALLOW_LOCAL=true`; never the platform’s own files). Nothing a tenant writes becomes an option of a command the platform runs: NUL is refused in every field, newlines in every field but the commands (multi-line scripts) and variable values, a leading `-` in `branch`. In a PATCH, `null` clears a setting: to none, or back to its default.',
    "- **Variables**: per service, `^[A-Z_][A-Z0-9_]{0,127}$` (`PORT` and `PLATFORM_*` reserved), values up to 32 KiB without NUL, at most 200 a service (409). A secret variable's value is encrypted at rest (AES-256-GCM) and never returned; a deployment uses the variables as they were at its trigger.",
  ].join('\n'),
};

/** Tags, in the order the document lists them. */
export const API_TAGS = ['Accounts', 'Projects', 'Services', 'Deployments', 'Webhooks', 'Meta'];

/** The session cookie every operation but the public ones needs. */
export const SESSION_SECURITY = 'sessionCookie';

const errorExample = (code: string) => ({ [code]: { value: { error: code, message: '...' } } });

/**
 * The gateway's components of the public API document: the error body every process answers
 * with, the answers the gateway itself gives to any /api request (the uniform error responses,
 * 429 with its headers) and the session cookie. Call after extendZodWithOpenApi(z).
 */
export function registerGatewayComponents(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', SESSION_SECURITY, {
    type: 'apiKey',
    in: 'cookie',
    name: 'platform.sid',
    description: 'Set by the login callback. Named `__Host-platform.sid` over HTTPS (production).',
  });

  const errorBody = registry.register(
    'Error',
    z
      .object({
        error: z.enum(ERROR_CODES),
        message: z.string(),
        details: z.array(z.object({ path: z.string(), message: z.string() }).strict()).optional(),
      })
      .strict()
      .openapi({
        description: 'Every error from every process. `details` only on validation errors.',
      }),
  );
  const errorResponse = (name: string, description: string, codes: string[]) =>
    registry.registerComponent('responses', name, {
      description,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: Object.assign({}, ...codes.map(errorExample)),
        },
      },
    });
  void errorBody;
  errorResponse(
    'BadRequest',
    'Malformed JSON or wrong content type (INVALID_REQUEST); a body, query, header or path parameter that fails validation (VALIDATION_ERROR, with details).',
    ['INVALID_REQUEST', 'VALIDATION_ERROR'],
  );
  errorResponse('Unauthorized', 'No session, an expired or invalid one: login is required.', [
    'UNAUTHORIZED',
  ]);
  errorResponse('Forbidden', 'CSRF token mismatch (login) or a forbidden Origin.', [
    'CSRF_FAILED',
    'FORBIDDEN',
  ]);
  errorResponse('NotFound', "Unknown, malformed or another account's id.", ['NOT_FOUND']);
  errorResponse(
    'Conflict',
    'Name already used, quota reached, transition not allowed, or an Idempotency-Key reused with another body.',
    ['CONFLICT'],
  );
  errorResponse('PayloadTooLarge', 'Body over 100 KiB.', ['PAYLOAD_TOO_LARGE']);
  errorResponse('ServiceUnavailable', 'A dependency does not answer.', ['SERVICE_UNAVAILABLE']);
  const seconds = (description: string) => ({
    schema: { type: 'integer' as const, minimum: 0 },
    description,
  });
  const rateLimited = (name: string, description: string) =>
    registry.registerComponent('responses', name, {
      description,
      headers: {
        'Retry-After': seconds('Seconds to wait: until the last of the spent windows ends.'),
        'RateLimit-Limit': seconds('Requests allowed in the window of the limit that applies.'),
        'RateLimit-Remaining': seconds('Requests left in that window: 0 here.'),
        'RateLimit-Reset': seconds('Seconds until that window ends.'),
      },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: errorExample('RATE_LIMITED'),
        },
      },
    });
  const requestLimits = 'or a limit of every request (per address, session or account) is spent';
  rateLimited(
    RATE_LIMITED_RESPONSES.request,
    'Too many requests: a limit of the client address, the session or the account is spent. Nothing reached the service.',
  );
  rateLimited(
    RATE_LIMITED_RESPONSES.login,
    `Too many login attempts from this address (${LIMITS.login} a minute by default, counted before the credential is checked), too many logins of this account (${LIMITS.login} a minute, counted once it is verified: no session starts), ${requestLimits}.`,
  );
  rateLimited(
    RATE_LIMITED_RESPONSES.deploy,
    `Too many deployments started by this account: triggers, redeploys and rollbacks together, ${LIMITS.deploy} a minute by default; ${requestLimits}. Nothing reached the service.`,
  );
  rateLimited(
    RATE_LIMITED_RESPONSES.webhookTest,
    `Too many webhook test sends by this account: ${LIMITS.webhookTest} a minute by default; ${requestLimits}. Nothing reached the service.`,
  );
  rateLimited(
    RATE_LIMITED_RESPONSES.redeliver,
    `Too many redeliveries by this account: ${LIMITS.redeliver} a minute by default; ${requestLimits}. Nothing reached the service.`,
  );
}

/** The 429 response of each kind of limit, by component name. */
const RATE_LIMITED_RESPONSES: Record<'request' | 'login' | ExpensiveOperation, string> = {
  request: 'RateLimited',
  login: 'LoginRateLimited',
  deploy: 'DeployRateLimited',
  webhookTest: 'WebhookTestRateLimited',
  redeliver: 'RedeliverRateLimited',
};

/** The 429 response (a component name) of an operation: its own limit's, if it has one. */
export function rateLimitedResponseOf(method: string, path: string): string {
  if (method.toUpperCase() === 'POST' && path === LOGIN_PATH) return RATE_LIMITED_RESPONSES.login;
  return RATE_LIMITED_RESPONSES[expensiveOperationAt(method, path) ?? 'request'];
}

/** The gateway's own endpoints: logout and this document. */
export function registerGatewayPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: LOGOUT_PATH,
    summary: 'End the session',
    tags: ['Accounts'],
    operationId: 'logout',
    responses: {
      204: {
        description:
          'The session is destroyed in Redis and the cookie cleared; replaying the old cookie is 401.',
      },
    },
  });

  registry.registerPath({
    method: 'get',
    path: OPENAPI_PATH,
    summary: 'This document',
    tags: ['Meta'],
    operationId: 'getOpenApi',
    security: [],
    responses: {
      200: {
        description: 'OpenAPI 3.1',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  });
}
