import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { toCurrentAccount } from './accounts/accounts.schemas';
import { LOGIN_PATH } from './login/login.routes';
import { loginRequest } from './login/login.schemas';
import type { LoginService } from './login/login.service';

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: z.ZodTypeAny) => ({ content: { 'application/json': { schema } } });

/**
 * Auth's part of the public API document (tools/openapi assembles it): the login callback and
 * the current account, with the schemas the routes validate and answer with. Call after
 * extendZodWithOpenApi(z).
 */
export function registerAuthApi(registry: OpenAPIRegistry): void {
  const id = z.string().openapi({ description: 'Opaque identifier' });
  const account = z
    .object({ id, email: z.string().email(), name: z.string() })
    .strict()
    .openapi('Account');
  const currentAccount = z
    .object({
      id,
      email: z.string().email(),
      name: z.string(),
      createdAt: z.string().datetime().openapi({ description: 'ISO 8601 UTC timestamp' }),
    })
    .strict()
    .openapi('CurrentAccount');
  // What the routes answer is what the document says (checked by the compiler).
  const _login: (a: Awaited<ReturnType<LoginService['logIn']>>) => z.infer<typeof account> = (a) =>
    a;
  const _me: (...a: Parameters<typeof toCurrentAccount>) => z.infer<typeof currentAccount> =
    toCurrentAccount;
  void _login;
  void _me;

  registry.registerPath({
    method: 'post',
    path: LOGIN_PATH,
    summary: 'Exchange a Google credential for a session',
    tags: ['Accounts'],
    operationId: 'login',
    description:
      "Needs no session. The `credential` is verified (signature, `aud` = GOOGLE_CLIENT_ID, `iss` accounts.google.com, expiry): otherwise 401 UNAUTHORIZED. `csrfToken` must equal the `g_csrf_token` cookie: otherwise 403 CSRF_FAILED. Accounts are keyed by the token's `sub`; email and name are refreshed at each login. Login attempts have a stricter rate limit.",
    security: [],
    request: {
      body: {
        required: true,
        content: { 'application/json': { schema: loginRequest.openapi('LoginRequest') } },
      },
    },
    responses: {
      200: {
        description:
          'The account; the session cookie is set (httpOnly, SameSite=Lax, Secure in production, 7-day rolling idle expiry, 30-day absolute lifetime). The session id is new at every login.',
        ...json(account),
      },
      400: ref('BadRequest'),
      401: ref('Unauthorized'),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/accounts/me',
    summary: 'The current account',
    tags: ['Accounts'],
    operationId: 'getMe',
    responses: { 200: { description: 'The account', ...json(currentAccount) } },
  });
}
