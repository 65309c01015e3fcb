import { Router, type Request, type RequestHandler, type Response } from 'express';
import { REQUEST_ID_HEADER, internal, jsonBody, requireJsonBody } from '@platform/shared';
import { endSession, startSession } from '../sessions/sessions';
import { LOGIN_PATH, LOGOUT_PATH, forwardLogin } from './auth-login';

/**
 * The login callback: auth verifies the credential and the CSRF double submit; only its 200
 * starts a session (a new id). Its errors go back to the client unchanged, with no session.
 * `rateLimit` counts the attempt before auth is asked, `limitAccount` the verified login against
 * its account before the session starts (a 429 starts none).
 */
export function loginRouter(options: {
  authUrl: string;
  rateLimit: RequestHandler;
  limitAccount: (req: Request, res: Response, accountId: string) => Promise<void>;
}): Router {
  const router = Router();
  router.post(LOGIN_PATH, options.rateLimit, requireJsonBody, jsonBody(), async (req, res) => {
    const answer = await forwardLogin(options.authUrl, {
      body: req.body,
      cookieHeader: req.headers.cookie,
      requestId: String(req.headers[REQUEST_ID_HEADER]),
    });
    if (answer.status !== 200) {
      res.status(answer.status).json(answer.body);
      return;
    }
    if (typeof answer.body.id !== 'string' || !answer.body.id) {
      throw internal('The login service answered without an account id.');
    }
    await options.limitAccount(req, res, answer.body.id);
    await startSession(req, answer.body.id);
    res.json(answer.body);
  });
  return router;
}

/** Logout (behind requireSession): the session is gone from Redis and the cookie cleared. */
export function logoutRouter(options: { secureCookie: boolean }): Router {
  const router = Router();
  router.post(LOGOUT_PATH, async (req, res) => {
    await endSession(req, res, options.secureCookie);
    res.status(204).end();
  });
  return router;
}
