import { randomBytes } from 'node:crypto';
import { requestJson, type JsonResponse } from './helpers';

/** The account a sign-in answers with. */
export interface SignedInAccount {
  id: string;
  email: string;
  name: string;
}

/**
 * A web client of the gateway, as a browser drives it: it keeps the cookies it is given (drops
 * one that is cleared) and speaks JSON. It signs in the way the sign-in page does: a
 * Google-format credential from the development identity provider (the gateway's /dev/token),
 * and the double-submit CSRF token as cookie and body field. The e2e suite and the benchmarks
 * drive the platform with it.
 */
export class GatewayClient {
  private readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  /** The Cookie header this client sends (also what a load tool replays). */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse<T>> {
    const sent: Record<string, string> = { accept: 'application/json', ...headers };
    if (this.cookies.size > 0) sent.cookie = this.cookieHeader();
    const response = await requestJson<T>(`${this.base}${path}`, {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const line of response.headers.getSetCookie()) this.keep(line);
    return response;
  }

  get = <T = any>(path: string) => this.request<T>('GET', path);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request<T>('POST', path, body, headers);
  patch = <T = any>(path: string, body: unknown) => this.request<T>('PATCH', path, body);
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);

  /** The body of an answer with status `expected`; throws with what came instead. */
  async expect<T = any>(
    expected: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T> {
    const answer = await this.request<T>(method, path, body);
    if (answer.status !== expected) {
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }

  /** A Google-format credential for this person from the development identity provider. */
  async credentialFor(email: string, name: string): Promise<string> {
    return (await this.expect<{ credential: string }>(200, 'POST', '/dev/token', { email, name }))
      .credential;
  }

  /** Signs in as this person (an account is made on the first sign-in); the login's answer. */
  async signIn(email: string, name = 'Test Person'): Promise<JsonResponse<SignedInAccount>> {
    const credential = await this.credentialFor(email, name);
    const csrfToken = randomBytes(16).toString('hex');
    this.setCookie('g_csrf_token', csrfToken);
    const login = await this.request<SignedInAccount>(
      'POST',
      '/api/accounts/google-auth-login-callback',
      { credential, csrfToken },
    );
    if (login.status !== 200) {
      throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
    }
    return login;
  }

  /** Keeps the cookie a Set-Cookie line sets, or forgets it when the line clears it. */
  private keep(setCookie: string): void {
    const [pair = '', ...attributes] = setCookie.split(';');
    const name = pair.slice(0, pair.indexOf('=')).trim();
    const value = pair.slice(pair.indexOf('=') + 1);
    const cleared = value === '' || attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
    if (cleared) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}
