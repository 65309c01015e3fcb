import { signIdentity, verifyIdentity } from './identity';

const SECRET = 'a-secret-that-is-at-least-32-characters-long';
const NOW = 1_800_000_000;

describe('internal identity header', () => {
  it('verifies a freshly signed header and yields its account id', () => {
    expect(verifyIdentity(signIdentity('acct-1', SECRET, NOW), SECRET, NOW)).toBe('acct-1');
  });

  it('refuses a missing header', () => {
    expect(verifyIdentity(undefined, SECRET, NOW)).toBeNull();
    expect(verifyIdentity('', SECRET, NOW)).toBeNull();
  });

  it('refuses a header whose payload was changed to another account', () => {
    const [version, , signature] = signIdentity('acct-1', SECRET, NOW).split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'acct-2', iat: NOW, exp: NOW + 60 })).toString(
      'base64url',
    );
    expect(verifyIdentity(`${version}.${forged}.${signature}`, SECRET, NOW)).toBeNull();
  });

  it('refuses a header signed with another secret', () => {
    const header = signIdentity('acct-1', 'another-secret-that-is-at-least-32-chars', NOW);
    expect(verifyIdentity(header, SECRET, NOW)).toBeNull();
  });

  it('refuses a header with a truncated signature', () => {
    expect(
      verifyIdentity(signIdentity('acct-1', SECRET, NOW).slice(0, -3), SECRET, NOW),
    ).toBeNull();
  });

  it('refuses an expired header', () => {
    const header = signIdentity('acct-1', SECRET, NOW, 60);
    expect(verifyIdentity(header, SECRET, NOW + 60)).toBe('acct-1');
    expect(verifyIdentity(header, SECRET, NOW + 61)).toBeNull();
  });

  it('refuses a header issued far in the future', () => {
    expect(verifyIdentity(signIdentity('acct-1', SECRET, NOW + 3600), SECRET, NOW)).toBeNull();
  });

  it('refuses headers of the wrong shape', () => {
    for (const header of ['v1', 'v1.a', 'v2.a.b', 'v1.a.b.c', 'garbage']) {
      expect(verifyIdentity(header, SECRET, NOW)).toBeNull();
    }
  });
});
