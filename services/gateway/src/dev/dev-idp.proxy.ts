import { Router } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { serviceUnavailable, type Logger } from '@platform/shared';

export const DEV_PREFIX = '/dev';

/**
 * Development only (never mounted in production): dev-idp's sign-in page and token endpoint on
 * the gateway's own origin, where its g_csrf_token cookie and the session cookie must live.
 * /dev/x is dev-idp's /x. dev-idp's own security headers (its CSP) replace the gateway's.
 */
export function devIdpProxy(target: string, logger: Logger): Router {
  const router = Router();
  // The page's relative links need the trailing slash (the route also matches /dev/ itself).
  router.get(DEV_PREFIX, (req, res, next) => {
    if (req.path !== DEV_PREFIX) return next();
    res.redirect(308, `${DEV_PREFIX}/`);
  });
  router.use(
    createProxyMiddleware({
      target,
      pathFilter: (path) => path.startsWith(`${DEV_PREFIX}/`),
      pathRewrite: (path) => path.slice(DEV_PREFIX.length),
      changeOrigin: true,
      on: {
        proxyReq: (proxyReq) => proxyReq.removeHeader('cookie'),
        error: (err, _req, res) => {
          logger.warn({ code: (err as NodeJS.ErrnoException).code }, 'dev-idp did not answer');
          if (!('writeHead' in res) || res.headersSent) {
            res.destroy();
            return;
          }
          const error = serviceUnavailable('dev-idp is not running.');
          res.writeHead(error.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(error.toBody()));
        },
      },
    }),
  );
  return router;
}
