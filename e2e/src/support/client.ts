import { randomBytes } from 'node:crypto';
import { requestJson, waitFor } from '@platform/shared/testing';

export const baseUrl = () => {
  const url = process.env.E2E_BASE_URL;
  if (!url) throw new Error('E2E_BASE_URL is not set (the e2e global setup sets it)');
  return url.replace(/\/$/, '');
};

/**
 * A web client of the gateway: keeps its cookies like a browser does and speaks JSON. It signs
 * in the way the sign-in page does: a credential from the development identity provider, and
 * the double-submit CSRF token as cookie and body.
 */
export class WebClient {
  private readonly cookies = new Map<string, string>();

  constructor(readonly base = baseUrl()) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const sent: Record<string, string> = { accept: 'application/json', ...headers };
    if (this.cookies.size > 0) {
      sent.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    const response = await requestJson<T>(`${this.base}${path}`, {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, ...rest] = pair!.split('=');
      const value = rest.join('=');
      const expired =
        attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name!.trim());
      else this.cookies.set(name!.trim(), value);
    }
    return response;
  }

  get = <T = any>(path: string) => this.request<T>('GET', path);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request<T>('POST', path, body, headers);
  patch = <T = any>(path: string, body: unknown) => this.request<T>('PATCH', path, body);
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);

  /** Gets a Google-format credential for this person from the development identity provider. */
  async credentialFor(email: string, name: string): Promise<string> {
    const response = await this.post<{ credential: string }>('/dev/token', { email, name });
    if (response.status !== 200)
      throw new Error(`dev token: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.credential;
  }

  async signIn(email = uniqueEmail(), name = 'E2E Person') {
    const credential = await this.credentialFor(email, name);
    const csrfToken = randomBytes(16).toString('hex');
    this.setCookie('g_csrf_token', csrfToken);
    const response = await this.post('/api/accounts/google-auth-login-callback', {
      credential,
      csrfToken,
    });
    if (response.status !== 200)
      throw new Error(`login: ${response.status} ${JSON.stringify(response.body)}`);
    return response;
  }
}

export const uniqueEmail = () =>
  `e2e-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;

/** Polls a deployment until it reaches one of `statuses`. */
export async function waitForDeployment(
  client: WebClient,
  path: string,
  statuses: string[],
  timeoutMs = 30_000,
) {
  return waitFor(
    async () => {
      const res = await client.get(path);
      return statuses.includes(res.body?.status) ? res.body : null;
    },
    { timeoutMs, intervalMs: 100, what: `deployment ${path} to reach ${statuses.join('/')}` },
  );
}
