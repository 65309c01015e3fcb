import { startTestServer, testLogger } from '@platform/shared/testing';
import { createApp } from '../app';
import { CERTS_PATH } from '../certs/certs.routes';
import {
  createSigningKey,
  mintIdToken,
  type IdTokenClaims,
  type MintOptions,
  type SigningKey,
} from '../tokens';

export const TEST_CLIENT_ID = 'test-client-id.apps.googleusercontent.com';

export interface RunningDevIdp {
  url: string;
  /** Where a verifier reads the certificates (GOOGLE_CERTS_URL). */
  certsUrl: string;
  clientId: string;
  key: SigningKey;
  /** A token signed by this dev-idp's key; `options` override the audience, issuer, expiry... */
  mint(claims: IdTokenClaims, options?: Partial<MintOptions>): string;
  close(): Promise<void>;
}

/** A dev-idp app on an ephemeral port, for tests of this package and of the auth service. */
export async function startDevIdp(clientId = TEST_CLIENT_ID): Promise<RunningDevIdp> {
  const key = createSigningKey();
  const server = await startTestServer(createApp({ logger: testLogger('dev-idp'), key, clientId }));
  return {
    url: server.url,
    certsUrl: `${server.url}${CERTS_PATH}`,
    clientId,
    key,
    mint: (claims, options) => mintIdToken(key, claims, { audience: clientId, ...options }),
    close: () => server.close(),
  };
}
