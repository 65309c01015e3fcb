import { randomBytes } from 'node:crypto';
import { IDENTITY_HEADER, signIdentity } from '@platform/shared';

export interface Answer<T = any> {
  status: number;
  body: T;
}

/**
 * A browser-like client of the gateway (the approach of e2e/src/support/client.ts): it keeps the
 * cookies it is given and signs in as the sign-in page does, with a Google-format credential
 * from the development identity provider (through the gateway's /dev/) and the double-submit
 * CSRF token as both cookie and body field.
 */
export class BrowserClient {
  readonly cookies = new Map<string, string>();
  accountId = '';

  constructor(readonly base: string) {}

  /** The Cookie header this client sends (also what load tools replay). */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request<T = any>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1);
      const cleared = value === '' || attributes.some((a) => /expires=Thu, 01 Jan 1970/i.test(a));
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as T };
  }

  get = <T = any>(path: string) => this.request<T>('GET', path);
  post = <T = any>(path: string, body?: unknown) => this.request<T>('POST', path, body ?? {});
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);

  /** Signs in through the development identity provider; returns the account id. */
  async signIn(email: string, name = 'Bench Person'): Promise<string> {
    const token = await this.post<{ credential: string }>('/dev/token', { email, name });
    if (token.status !== 200)
      throw new Error(`dev token: ${token.status} ${JSON.stringify(token.body)}`);
    const csrfToken = randomBytes(16).toString('hex');
    this.cookies.set('g_csrf_token', csrfToken);
    const login = await this.post<{ id: string }>('/api/accounts/google-auth-login-callback', {
      credential: token.body.credential,
      csrfToken,
    });
    if (login.status !== 200)
      throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
    this.accountId = login.body.id;
    return this.accountId;
  }

  /** Answers `expected` or throws with what came instead. */
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
}

/**
 * A client of the gateway at `gateway`, signed in as a new person, with a project named after
 * `label` and one service in it, both made through the API.
 */
export async function clientWithService(gateway: string, label: string, serviceName: string) {
  const client = new BrowserClient(gateway);
  const accountId = await client.signIn(uniqueEmail(label));
  const project = await client.expect(201, 'POST', '/api/projects', {
    name: `bench ${label} ${Date.now()}`,
  });
  const service = await client.expect(201, 'POST', `/api/projects/${project.id}/services`, {
    name: serviceName,
  });
  return { client, accountId, project, service };
}

export const uniqueEmail = (label: string) =>
  `bench-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;

/**
 * The identity header the gateway would add, for calling a service directly. signIdentity's
 * default lifetime is 60 s; a benchmark signs once for its whole run, so it asks for `ttlSeconds`.
 */
export function identityHeader(accountId: string, secret: string, ttlSeconds: number) {
  const now = Math.floor(Date.now() / 1000);
  return { [IDENTITY_HEADER]: signIdentity(accountId, secret, now, ttlSeconds) };
}

/** GET with a signed identity, straight to a service (what the gateway's proxy does). */
export async function directGet<T = any>(
  url: string,
  headers: Record<string, string>,
): Promise<Answer<T>> {
  const response = await fetch(url, { headers: { accept: 'application/json', ...headers } });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}
