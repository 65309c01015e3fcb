import { Router } from 'express';
import { renderCertificates, type SigningKey } from '../tokens';

export const CERTS_PATH = '/oauth2/v1/certs';

// Google sends a max-age of hours; a short one keeps a restarted dev-idp (new in-memory key)
// from being locked out of services that cached the old certificate.
const CERTS_CACHE_CONTROL = 'public, max-age=60, must-revalidate, no-transform';

export function certsRouter(key: SigningKey): Router {
  const router = Router();
  router.get(CERTS_PATH, (_req, res) => {
    res.set('Cache-Control', CERTS_CACHE_CONTROL).json(renderCertificates([key]));
  });
  return router;
}
