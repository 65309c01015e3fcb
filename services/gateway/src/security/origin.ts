import type { RequestHandler } from 'express';
import { forbidden } from '@platform/shared';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request defence beside SameSite=Lax: a state-changing request whose Origin header
 * is present and not one of ours is 403 FORBIDDEN. Browsers always send Origin on such
 * requests; other clients that send none are not browsers acting for a victim.
 */
export function checkOrigin(allowedOrigins: string[]): RequestHandler {
  const allowed = new Set(allowedOrigins);
  return (req, _res, next) => {
    const origin = req.headers.origin;
    if (SAFE_METHODS.has(req.method) || origin === undefined || allowed.has(origin)) return next();
    next(forbidden('The request comes from an origin that is not allowed.'));
  };
}
