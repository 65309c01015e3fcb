import { createHash, timingSafeEqual } from 'node:crypto';
import { CSRF_COOKIE, csrfFailed, readCookie } from '@platform/shared';

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
