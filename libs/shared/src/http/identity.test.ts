import { createHmac } from 'node:crypto';
import { signIdentity, verifyIdentity, type IdentityTarget } from './identity';

const SECRET = 'a-secret-that-is-at-least-32-characters-long';
const NOW = 1_800_000_000;
const TARGET: IdentityTarget = { aud: 'projects', method: 'GET', path: '/api/projects/p1' };

/** A header of `version` with `payload`, signed as signIdentity signs: what only a key holder makes. */
function forge(payload: object, version = 'v2', secret = SECRET): string {
  const data = `${version}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${data}.${createHmac('sha256', secret).update(data).digest('base64url')}`;
}

const validPayload = { sub: 'acct-1', ...TARGET, iat: NOW, exp: NOW + 60 };

describe('internal identity header', () => {
  it('verifies a freshly signed header for its request and yields its account id', () => {
    const header = signIdentity('acct-1', TARGET, SECRET, NOW);
    expect(header.startsWith('v2.')).toBe(true);
    expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBe('acct-1');
    // What the hand-made payload says is exactly what signIdentity signs.
    expect(verifyIdentity(forge(validPayload), SECRET, TARGET, NOW)).toBe('acct-1');
  });

  it('compares the method in upper case on both ends', () => {
    const header = signIdentity('acct-1', { ...TARGET, method: 'get' }, SECRET, NOW);
    expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBe('acct-1');
  });

  it('refuses a missing header', () => {
    expect(verifyIdentity(undefined, SECRET, TARGET, NOW)).toBeNull();
    expect(verifyIdentity('', SECRET, TARGET, NOW)).toBeNull();
  });

  it.each([
    ['another service', { aud: 'deployments' }],
    ['another method', { method: 'DELETE' }],
    ['another path', { path: '/api/projects/p2' }],
    ['the path with a query string', { path: '/api/projects/p1?x=1' }],
    ['the path with a trailing slash', { path: '/api/projects/p1/' }],
  ] as const)('refuses a header made for the request, sent with %s', (_case, change) => {
    const header = signIdentity('acct-1', TARGET, SECRET, NOW);
    expect(verifyIdentity(header, SECRET, { ...TARGET, ...change }, NOW)).toBeNull();
  });

  it.each([
    ['the account', { sub: 'acct-2' }],
    ['the audience', { aud: 'deployments' }],
    ['the method', { method: 'DELETE' }],
    ['the path', { path: '/api/projects/p2' }],
    ['the expiry', { exp: NOW + 3600 }],
  ])('refuses a header whose payload was changed (%s)', (_case, change) => {
    const [version, , signature] = signIdentity('acct-1', TARGET, SECRET, NOW).split('.');
    const changed = { ...validPayload, ...change };
    const forged = Buffer.from(JSON.stringify(changed)).toString('base64url');
    // Sent with the request the changed payload names: only the signature can refuse it.
    const { aud, method, path } = changed;
    const header = `${version}.${forged}.${signature}`;
    expect(verifyIdentity(header, SECRET, { aud, method, path } as IdentityTarget, NOW)).toBeNull();
  });

  it('refuses a header signed with another secret', () => {
    const header = signIdentity('acct-1', TARGET, 'another-secret-that-is-at-least-32-chars', NOW);
    expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBeNull();
  });

  it('refuses a header with a truncated signature', () => {
    const header = signIdentity('acct-1', TARGET, SECRET, NOW);
    expect(verifyIdentity(header.slice(0, -3), SECRET, TARGET, NOW)).toBeNull();
  });

  it('refuses a header once its 60 s are over', () => {
    const header = signIdentity('acct-1', TARGET, SECRET, NOW);
    expect(verifyIdentity(header, SECRET, TARGET, NOW + 60)).toBe('acct-1');
    expect(verifyIdentity(header, SECRET, TARGET, NOW + 61)).toBeNull();
  });

  it('refuses a header made to live longer than 60 s, even while it has not expired', () => {
    const header = forge({ ...validPayload, exp: NOW + 61 });
    expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBeNull();
  });

  it('refuses a header issued far in the future', () => {
    const header = signIdentity('acct-1', TARGET, SECRET, NOW + 3600);
    expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBeNull();
  });

  it('refuses a v1 header (no audience, method or path), however well signed', () => {
    const v1 = forge({ sub: 'acct-1', iat: NOW, exp: NOW + 60 }, 'v1');
    expect(verifyIdentity(v1, SECRET, TARGET, NOW)).toBeNull();
    // Nor does a v1 payload pass under the new version's name.
    expect(
      verifyIdentity(forge({ sub: 'acct-1', iat: NOW, exp: NOW + 60 }), SECRET, TARGET, NOW),
    ).toBeNull();
    // Nor a v2 payload relabelled v1.
    expect(verifyIdentity(forge(validPayload, 'v1'), SECRET, TARGET, NOW)).toBeNull();
  });

  it('refuses headers of the wrong shape', () => {
    for (const header of ['v2', 'v2.a', 'v2.a.b', 'v2.a.b.c', 'v3.a.b', 'garbage']) {
      expect(verifyIdentity(header, SECRET, TARGET, NOW)).toBeNull();
    }
    expect(verifyIdentity(forge({ ...validPayload, sub: '' }), SECRET, TARGET, NOW)).toBeNull();
    expect(
      verifyIdentity(forge({ ...validPayload, exp: 'later' }), SECRET, TARGET, NOW),
    ).toBeNull();
  });
});
