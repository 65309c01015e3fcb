import { Lifecycle, parseConfig } from '@platform/shared';
import { startTestServer, testEnv, testLogger } from '@platform/shared/testing';
import { CERTS_PATH } from '../certs/certs.routes';
import { compose } from '../compose';
import { configSchema } from '../config';
import { mintIdToken, type IdTokenClaims, type MintOptions, type SigningKey } from '../tokens';

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

/**
 * dev-idp as main.ts composes it (a new key in memory), on an ephemeral port, for tests of this
 * package, of the auth service and of the gateway.
 */
export async function startDevIdp(clientId = TEST_CLIENT_ID): Promise<RunningDevIdp> {
  const logger = testLogger('dev-idp');
  const lifecycle = new Lifecycle(logger);
  const config = parseConfig(configSchema, { ...testEnv(), GOOGLE_CLIENT_ID: clientId });
  const { app, key } = await compose(config, { logger, lifecycle });
  const server = await startTestServer(app);
  lifecycle.onShutdown('test server', () => server.close());
  return {
    url: server.url,
    certsUrl: `${server.url}${CERTS_PATH}`,
    clientId,
    key,
    mint: (claims, options) => mintIdToken(key, claims, { audience: clientId, ...options }),
    close: () => lifecycle.shutdown('test over'),
  };
}
