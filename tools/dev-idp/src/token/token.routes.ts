import { Router } from 'express';
import { jsonBody, requireJsonBody, validate } from '@platform/shared';
import { mintIdToken, type SigningKey } from '../tokens';
import { tokenRequest } from './token.schemas';

/** `POST /token {email, name}` → `{credential}`: what Google's sign-in button would hand over. */
export function tokenRouter(key: SigningKey, clientId: string): Router {
  const router = Router();
  router.post('/token', requireJsonBody, jsonBody(), (req, res) => {
    const claims = validate(tokenRequest, req.body);
    res.json({ credential: mintIdToken(key, claims, { audience: clientId }) });
  });
  return router;
}
