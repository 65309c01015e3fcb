// Google-format ID tokens and certificates made with node:crypto alone, so tests in any package
// can import this file by relative path without pulling in a dependency.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

/** An RS256 signing key with the `kid` its tokens name and its self-signed X.509 certificate. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  certificatePem: string;
}

export interface IdTokenClaims {
  email: string;
  name: string;
  /** Google's stable account id; derived from the e-mail address when absent. */
  sub?: string;
  emailVerified?: boolean;
}

export interface MintOptions {
  /** The `aud` claim: the OAuth client id the token is meant for. */
  audience: string;
  /** Default https://accounts.google.com. */
  issuer?: string;
  /** Issued two hours ago, expired one hour ago: well past Google's five-minute clock skew. */
  expired?: boolean;
  /** Unsigned token with `alg: none` (and an empty signature), as an attacker would send. */
  algNone?: boolean;
  /** Unix seconds; default now. */
  now?: number;
}

const TOKEN_LIFETIME_SECONDS = 3600;

/**
 * A new RSA-2048 key. Pass the `kid` of another key to make a forgery: same kid, other key.
 * Without one, the kid is derived from the public key, as stable as the key itself.
 */
export function createSigningKey(kid?: string): SigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return toSigningKey(privateKey, kid);
}

/** The PKCS#8 PEM of the private key, to persist it (KEY_FILE). */
export function exportSigningKey(key: SigningKey): string {
  return key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export function importSigningKey(pem: string): SigningKey {
  return toSigningKey(createPrivateKey(pem));
}

function toSigningKey(privateKey: KeyObject, kid?: string): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyId = kid ?? createHash('sha256').update(spki).digest('hex').slice(0, 40);
  return {
    kid: keyId,
    privateKey,
    publicKey,
    certificatePem: selfSignedCertificate(privateKey, spki),
  };
}

/** Google's subjects are opaque numeric strings; the same e-mail always gives the same one. */
export function subjectForEmail(email: string): string {
  const digest = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  return `1${(BigInt(`0x${digest.slice(0, 16)}`) % 10n ** 20n).toString().padStart(20, '0')}`;
}

const base64url = (value: object | Buffer) =>
  (Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))).toString('base64url');

/** A Google-format ID token (JWT) for `claims`, signed RS256 with `key`. */
export function mintIdToken(key: SigningKey, claims: IdTokenClaims, options: MintOptions): string {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const iat = options.expired ? now - 2 * TOKEN_LIFETIME_SECONDS : now;
  const header = { alg: options.algNone ? 'none' : 'RS256', kid: key.kid, typ: 'JWT' };
  const payload = {
    iss: options.issuer ?? GOOGLE_ISSUER,
    azp: options.audience,
    aud: options.audience,
    sub: claims.sub ?? subjectForEmail(claims.email),
    email: claims.email,
    email_verified: claims.emailVerified ?? true,
    name: claims.name,
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
    jti: randomBytes(16).toString('hex'),
  };
  const signingInput = `${base64url(header)}.${base64url(payload)}`;
  if (options.algNone) return `${signingInput}.`;
  return `${signingInput}.${base64url(sign('sha256', Buffer.from(signingInput), key.privateKey))}`;
}

/** The body of Google's PEM certificates endpoint (oauth2/v1/certs): `{ kid: certificate }`. */
export function renderCertificates(keys: SigningKey[]): Record<string, string> {
  return Object.fromEntries(keys.map((key) => [key.kid, key.certificatePem]));
}

// --- A minimal DER writer: just enough ASN.1 for one self-signed X.509 v3 certificate. ---

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const der = (tag: number, content: Buffer) =>
  Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
const sequence = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const integer = (bytes: Buffer) =>
  // A leading 1 bit would make the integer negative.
  der(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
const utf8String = (text: string) => der(0x0c, Buffer.from(text, 'utf8'));
const bitString = (bytes: Buffer) => der(0x03, Buffer.concat([Buffer.from([0]), bytes]));
const NULL = Buffer.from([0x05, 0x00]);

function objectIdentifier(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) base128.unshift(0x80 | (value & 0x7f));
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime, YYMMDDHHMMSSZ (valid for 1950–2049, which is all a dev certificate needs). */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14);
  return der(0x17, Buffer.from(`${text}Z`, 'ascii'));
}

const SHA256_WITH_RSA = sequence(objectIdentifier('1.2.840.113549.1.1.11'), NULL);
const COMMON_NAME = '2.5.4.3';
const DAY_MS = 24 * 3600 * 1000;

function selfSignedCertificate(privateKey: KeyObject, spki: Buffer): string {
  const name = sequence(set(sequence(objectIdentifier(COMMON_NAME), utf8String('dev-idp'))));
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const now = Date.now();
  const tbs = sequence(
    der(0xa0, integer(Buffer.from([2]))), // [0] EXPLICIT version: v3
    integer(serial),
    SHA256_WITH_RSA,
    name,
    sequence(utcTime(new Date(now - DAY_MS)), utcTime(new Date(now + 365 * DAY_MS))),
    name,
    spki,
  );
  const certificate = sequence(tbs, SHA256_WITH_RSA, bitString(sign('sha256', tbs, privateKey)));
  const lines = certificate.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
