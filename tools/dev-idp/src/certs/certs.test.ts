import { OAuth2Client } from 'google-auth-library';
import { requestJson, useRunning } from '@platform/shared/testing';
import { startDevIdp } from '../test/start-dev-idp';
import { createSigningKey, mintIdToken } from '../tokens';

describe('GET /oauth2/v1/certs', () => {
  const idp = useRunning(startDevIdp);

  // Node's fetch: gaxios would otherwise import() node-fetch, which jest's CommonJS runtime cannot.
  const verifier = () =>
    new OAuth2Client({
      endpoints: { oauth2FederatedSignonPemCertsUrl: idp().certsUrl },
      transporterOptions: { fetchImplementation: fetch },
    });

  it('serves the certificate under its kid with a Google-like max-age', async () => {
    const response = await requestJson(idp().certsUrl);

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual([idp().key.kid]);
    expect(response.body[idp().key.kid]).toBe(idp().key.certificatePem);
    expect(response.headers.get('cache-control')).toMatch(/\bmax-age=\d+/);
  });

  it('serves certificates that verify tokens from POST /token with google-auth-library', async () => {
    const minted = await requestJson(`${idp().url}/token`, {
      method: 'POST',
      body: { email: 'grace@example.com', name: 'Grace Hopper' },
    });

    const ticket = await verifier().verifyIdToken({
      idToken: minted.body.credential,
      audience: idp().clientId,
    });

    expect(minted.status).toBe(200);
    expect(ticket.getPayload()).toMatchObject({
      iss: 'https://accounts.google.com',
      aud: idp().clientId,
      email: 'grace@example.com',
      name: 'Grace Hopper',
    });
  });

  it('serves certificates that google-auth-library uses to reject a forged token', async () => {
    const forged = mintIdToken(
      createSigningKey(idp().key.kid),
      { email: 'grace@example.com', name: 'Grace' },
      { audience: idp().clientId },
    );

    await expect(
      verifier().verifyIdToken({ idToken: forged, audience: idp().clientId }),
    ).rejects.toThrow(/Invalid token signature/);
  });
});
