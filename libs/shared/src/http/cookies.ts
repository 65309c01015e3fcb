/** The cookie Google Identity Services sets for its double-submit CSRF check. */
export const CSRF_COOKIE = 'g_csrf_token';

/** The value of cookie `name` in a Cookie header, URL-decoded; the first one when sent twice. */
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
