import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { GatewayClient, waitFor } from '@platform/shared/testing';

export const baseUrl = () => {
  const url = process.env.E2E_BASE_URL;
  if (!url) throw new Error('E2E_BASE_URL is not set (the e2e global setup sets it)');
  return url.replace(/\/$/, '');
};

/** The shared GatewayClient, on the e2e stack's gateway, signing in as a new person by default. */
export class WebClient extends GatewayClient {
  constructor(base = baseUrl()) {
    super(base);
  }

  override signIn(email = uniqueEmail(), name = 'E2E Person') {
    return super.signIn(email, name);
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

/**
 * `GET url` of a deployed app (`http://<serviceId>.localhost:<port>/…`), sent to 127.0.0.1 with
 * that Host: `.localhost` names resolve to this machine in browsers, not always in Node.
 */
export function getApp(url: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
