import { OAuth2Client } from 'google-auth-library';
import { serviceUnavailable, unauthorized } from '@platform/shared';
import type { AccountProfile } from '../accounts/accounts.repository';

export interface GoogleIdTokenOptions {
  clientId: string;
  /** Where the signing certificates are read (dev-idp, tests); default Google's own. */
  certsUrl?: string;
}

/** Verifies a Google ID token and returns who it names; 401 when it is not valid. */
export type VerifyGoogleIdToken = (idToken: string) => Promise<AccountProfile>;

const CERTS_TIMEOUT_MS = 3_000;

const invalidCredential = () =>
  unauthorized('The sign-in credential is not valid or has expired: login is required.');

export function createGoogleIdTokenVerifier(options: GoogleIdTokenOptions): VerifyGoogleIdToken {
  const client = new OAuth2Client({
    ...(options.certsUrl && { endpoints: { oauth2FederatedSignonPemCertsUrl: options.certsUrl } }),
    // Node's own fetch: gaxios would otherwise import() node-fetch, which jest cannot load.
    transporterOptions: { fetchImplementation: fetch, timeout: CERTS_TIMEOUT_MS },
  });

  return async (idToken) => {
    // Fetched (or taken from the cache, per the endpoint's max-age) on its own first, so that an
    // unreachable certificate endpoint is a 503, never mistaken for a bad credential.
    try {
      await client.getFederatedSignonCertsAsync();
    } catch {
      throw serviceUnavailable('The identity provider could not be reached: retry shortly.');
    }
    // Signature, `aud`, `iss` (accounts.google.com with or without https://) and expiry. The
    // library's messages quote the token, so they are never logged or returned.
    let payload;
    try {
      payload = (await client.verifyIdToken({ idToken, audience: options.clientId })).getPayload();
    } catch {
      throw invalidCredential();
    }
    if (!payload?.sub || !payload.email) throw invalidCredential();
    return { sub: payload.sub, email: payload.email, name: payload.name || payload.email };
  };
}
