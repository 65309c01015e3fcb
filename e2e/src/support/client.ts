import { randomBytes } from 'node:crypto';
import { GatewayClient, waitFor } from '@platform/shared/testing';

export { getApp } from '@platform/shared/testing';

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

/** A client of this describe block, signed in as a new person called `name` before its tests. */
export function useSignedIn(name: string): WebClient {
  const client = new WebClient();
  beforeAll(async () => {
    await client.signIn(undefined, name);
  });
  return client;
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
