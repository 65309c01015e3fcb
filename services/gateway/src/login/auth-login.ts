import { serialize } from 'cookie';
import { CSRF_COOKIE, REQUEST_ID_HEADER, readCookie, serviceUnavailable } from '@platform/shared';

export const LOGIN_PATH = '/api/accounts/google-auth-login-callback';
export const LOGOUT_PATH = '/api/accounts/logout';

const LOGIN_TIMEOUT_MS = 10_000;

export interface AuthAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Forwards the login callback to auth: the JSON body, the g_csrf_token cookie and the request
 * id. Any JSON answer is returned as it is; no answer (or not JSON) is 503.
 */
export async function forwardLogin(
  authUrl: string,
  request: { body: unknown; cookieHeader?: string; requestId: string },
): Promise<AuthAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    [REQUEST_ID_HEADER]: request.requestId,
  };
  // The CSRF cookie alone, as auth will read it; no other cookie leaves the gateway.
  const csrfToken = readCookie(request.cookieHeader, CSRF_COOKIE);
  if (csrfToken !== undefined) headers.cookie = serialize(CSRF_COOKIE, csrfToken);
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(new URL(LOGIN_PATH, authUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify(request.body ?? {}),
      signal: AbortSignal.timeout(LOGIN_TIMEOUT_MS),
    });
    body = await response.json();
  } catch {
    throw serviceUnavailable('The login service is unavailable: retry shortly.');
  }
  if (typeof body !== 'object' || body === null) {
    throw serviceUnavailable('The login service gave an unexpected answer: retry shortly.');
  }
  return { status: response.status, body: body as Record<string, unknown> };
}
