import { createHash, timingSafeEqual } from 'node:crypto';
import { csrfFailed } from '@platform/shared';

/** The cookie Google Identity Services sets for its double-submit CSRF check. */
export const CSRF_COOKIE = 'g_csrf_token';

/** The value of cookie `name` in a Cookie header; the first one when sent twice. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(';') ?? []) {
    const separator = pair.indexOf('=');
    if (separator < 0 || pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Double submit: the body's token must equal the g_csrf_token cookie. Compared as equal-length
 * digests in constant time, so the comparison leaks neither length nor prefix.
 */
export function assertCsrfTokenMatches(cookieHeader: string | undefined, csrfToken: string): void {
  const cookie = readCookie(cookieHeader, CSRF_COOKIE);
  if (!cookie) throw csrfFailed('The g_csrf_token cookie is missing.');
  if (!timingSafeEqual(digest(cookie), digest(csrfToken))) throw csrfFailed();
}
