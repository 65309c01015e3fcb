import { Router } from 'express';
import { jsonBody, requireJsonBody, validate } from '@platform/shared';
import { assertCsrfTokenMatches } from './csrf';
import { loginRequest } from './login.schemas';
import type { LoginService } from './login.service';

export const LOGIN_PATH = '/api/accounts/google-auth-login-callback';

/**
 * The login callback. Public (no identity header): a valid Google ID token and the CSRF double
 * submit are the authentication. The gateway turns its 200 into a session.
 */
export function loginRouter(login: LoginService): Router {
  const router = Router();
  router.post(LOGIN_PATH, requireJsonBody, jsonBody(), async (req, res) => {
    const { credential, csrfToken } = validate(loginRequest, req.body);
    assertCsrfTokenMatches(req.headers.cookie, csrfToken);
    res.json(await login.logIn(credential));
  });
  return router;
}
