import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import compression from 'compression';
import express, { Router } from 'express';
import type { Logger } from '@platform/shared';

/** Where the dashboard's sign-in comes from: dev-idp locally, Google Identity Services otherwise. */
export interface DashboardSignIn {
  /** The development identity provider's path on this origin (`/dev/`), where it runs. */
  devIdpPath?: string;
  /** The OAuth client id of the Google sign-in button, where dev-idp does not run. */
  googleClientId?: string;
}

const GOOGLE_GSI = 'https://accounts.google.com/gsi/';

/** The page's policy: its own scripts and styles only, never inline; Google's sign-in if used. */
export function dashboardCsp(google: boolean): string {
  const gsi = google ? ` ${GOOGLE_GSI}` : '';
  return [
    "default-src 'self'",
    `script-src 'self'${google ? ` ${GOOGLE_GSI}client` : ''}`,
    `style-src 'self'${google ? ` ${GOOGLE_GSI}style` : ''}`,
    `connect-src 'self'${gsi}`,
    `frame-src ${google ? GOOGLE_GSI : "'none'"}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** index.html with the sign-in settings as meta tags (read by the app; no inline script). */
export function withSignInMeta(html: string, signIn: DashboardSignIn): string {
  const tags = [
    signIn.devIdpPath &&
      `<meta name="platform-dev-idp" content="${escapeAttribute(signIn.devIdpPath)}">`,
    signIn.googleClientId &&
      `<meta name="platform-google-client-id" content="${escapeAttribute(signIn.googleClientId)}">`,
  ].filter(Boolean);
  return html.replace('</head>', `${tags.join('')}</head>`);
}

/** The API's and dev-idp's paths: never the dashboard's. */
const isPlatformPath = (path: string) =>
  path === '/api' || path.startsWith('/api/') || path === '/dev' || path.startsWith('/dev/');

/**
 * The web dashboard (apps/dashboard's build in `dir`) at `/`: its hashed assets under /assets,
 * cached for good; any other GET of a page that asks for HTML, outside /api and /dev, answers
 * with the app's index.html so that deep links work (contracts.md). Requests that do not ask
 * for text/html fall through to the JSON 404. Without a build in `dir` nothing is served (and it says so).
 */
export function dashboardStatic(options: {
  dir: string;
  signIn: DashboardSignIn;
  logger: Logger;
}): Router {
  const router = Router();
  const indexFile = join(options.dir, 'index.html');
  if (!existsSync(indexFile)) {
    options.logger.warn(
      { dir: options.dir },
      'no dashboard build: / is not served (npm run build -w apps/dashboard)',
    );
    return router;
  }
  const html = withSignInMeta(readFileSync(indexFile, 'utf8'), options.signIn);
  const csp = dashboardCsp(!options.signIn.devIdpPath && !!options.signIn.googleClientId);

  // The dashboard's own answers gzipped when the browser accepts it (the JavaScript is a third
  // of its size so); never /api's (its event streams must not be buffered) nor /dev's.
  const compress = compression();
  router.use((req, res, next) => (isPlatformPath(req.path) ? next() : compress(req, res, next)));
  router.use(
    '/assets',
    express.static(join(options.dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: true,
    }),
  );
  // Middleware, not router.get(): a route for every path would make the router answer any
  // OPTIONS itself (200 with its Allow), /api's included.
  router.use((req, res, next) => {
    const path = req.path;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isPlatformPath(path)) return next();
    // A browser's navigation asks for text/html; an API client's */* gets the JSON 404.
    if (path.startsWith('/assets/') || !req.headers.accept?.includes('text/html')) return next();
    res
      .set({
        'Content-Security-Policy': csp,
        'Cache-Control': 'no-cache',
        'Referrer-Policy': 'same-origin',
      })
      .type('html')
      .send(html);
  });
  return router;
}
