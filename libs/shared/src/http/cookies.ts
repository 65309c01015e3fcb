import { parse } from 'cookie';

/** The cookie Google Identity Services sets for its double-submit CSRF check. */
export const CSRF_COOKIE = 'g_csrf_token';

/**
 * The value of cookie `name` in a Cookie header (the `cookie` package's reading, the one express
 * itself uses): URL-decoded, the first one when sent twice, undefined when absent.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return header ? parse(header)[name] : undefined;
}
