import { X509Certificate, createVerify } from 'node:crypto';
import {
  GOOGLE_ISSUER,
  createSigningKey,
  exportSigningKey,
  importSigningKey,
  mintIdToken,
  renderCertificates,
  subjectForEmail,
} from './tokens';

const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

function verifiesWith(token: string, pem: string): boolean {
  const [header, payload, signature] = token.split('.');
  return createVerify('RSA-SHA256')
    .update(`${header}.${payload}`)
    .verify(pem, Buffer.from(signature ?? '', 'base64url'));
}

describe('dev-idp tokens', () => {
  const key = createSigningKey();
  const now = 1_800_000_000;

  it('mints an RS256 token with the key id and Google claims', () => {
    const token = mintIdToken(
      key,
      { email: 'ada@example.com', name: 'Ada' },
      { audience: 'client-1', now },
    );
    const [header, payload] = token.split('.');

    expect(decode(header!)).toEqual({ alg: 'RS256', kid: key.kid, typ: 'JWT' });
    expect(decode(payload!)).toEqual({
      iss: GOOGLE_ISSUER,
      azp: 'client-1',
      aud: 'client-1',
      sub: subjectForEmail('ada@example.com'),
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada',
      iat: now,
      exp: now + 3600,
      jti: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(verifiesWith(token, key.certificatePem)).toBe(true);
  });

  it('derives the same numeric subject from the same e-mail, whatever its case', () => {
    expect(subjectForEmail('Ada@Example.com')).toBe(subjectForEmail('ada@example.com'));
    expect(subjectForEmail('ada@example.com')).toMatch(/^1\d{20}$/);
    expect(subjectForEmail('bob@example.com')).not.toBe(subjectForEmail('ada@example.com'));
  });

  it('mints expired, wrong-audience and wrong-issuer tokens on request', () => {
    const claims = { email: 'ada@example.com', name: 'Ada', sub: '42' };
    const expired = decode(
      mintIdToken(key, claims, { audience: 'a', expired: true, now }).split('.')[1]!,
    );
    const other = decode(
      mintIdToken(key, claims, { audience: 'b', issuer: 'https://evil.example', now }).split(
        '.',
      )[1]!,
    );

    expect(expired).toMatchObject({ sub: '42', iat: now - 7200, exp: now - 3600 });
    expect(other).toMatchObject({ aud: 'b', iss: 'https://evil.example' });
  });

  it('mints an unsigned alg none token with an empty signature', () => {
    const token = mintIdToken(
      key,
      { email: 'ada@example.com', name: 'Ada' },
      { audience: 'a', algNone: true },
    );
    const [header, , signature] = token.split('.');

    expect(decode(header!)).toEqual({ alg: 'none', kid: key.kid, typ: 'JWT' });
    expect(signature).toBe('');
  });

  it('makes a forging key with the same kid whose tokens the real certificate rejects', () => {
    const forger = createSigningKey(key.kid);
    const forged = mintIdToken(
      forger,
      { email: 'ada@example.com', name: 'Ada' },
      { audience: 'a' },
    );

    expect(forger.kid).toBe(key.kid);
    expect(verifiesWith(forged, key.certificatePem)).toBe(false);
    expect(verifiesWith(forged, forger.certificatePem)).toBe(true);
  });

  it('renders a self-signed X.509 certificate of the public key under its kid', () => {
    const certs = renderCertificates([key]);
    const certificate = new X509Certificate(certs[key.kid]!);

    expect(Object.keys(certs)).toEqual([key.kid]);
    expect(certs[key.kid]).toMatch(
      /^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/,
    );
    expect(certificate.subject).toBe('CN=dev-idp');
    expect(certificate.verify(key.publicKey)).toBe(true);
    expect(certificate.publicKey.equals(key.publicKey)).toBe(true);
    expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(
      Date.now() + 300 * 24 * 3600 * 1000,
    );
  });

  it('keeps the kid and the key through a PEM export and import', () => {
    const restored = importSigningKey(exportSigningKey(key));

    expect(restored.kid).toBe(key.kid);
    expect(restored.kid).toMatch(/^[0-9a-f]{40}$/);
    const token = mintIdToken(
      restored,
      { email: 'ada@example.com', name: 'Ada' },
      { audience: 'a' },
    );
    expect(verifiesWith(token, key.certificatePem)).toBe(true);
  });
});
