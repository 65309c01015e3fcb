import { randomBytes } from 'node:crypto';
import { createSecretBox, encryptionEnv } from './secrets';

const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('createSecretBox', () => {
  const key = newKey('k1');
  const box = createSecretBox({ ENCRYPTION_KEY: key });

  it('opens what it sealed, for the same context', () => {
    const sealed = box.seal('hunter2 ünïcode', 'variable:s1:DB_PASSWORD');
    expect(box.open(sealed, 'variable:s1:DB_PASSWORD')).toBe('hunter2 ünïcode');
  });

  it('writes one v1 string naming its key, without the plaintext, different each time', () => {
    const first = box.seal('hunter2', 'ctx');
    const second = box.seal('hunter2', 'ctx');
    expect(first).toMatch(/^v1:k1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]*$/);
    expect(first).not.toContain('hunter2');
    expect(first).not.toBe(second);
    expect(box.keyIdOf(first)).toBe('k1');
  });

  it('seals the empty string', () => {
    expect(box.open(box.seal('', 'ctx'), 'ctx')).toBe('');
  });

  it('refuses to open a value sealed for another context', () => {
    const sealed = box.seal('hunter2', 'variable:s1:A');
    expect(() => box.open(sealed, 'variable:s2:A')).toThrow(/does not open/);
  });

  it('refuses to open an altered ciphertext or tag', () => {
    const sealed = box.seal('hunter2', 'ctx');
    const parts = sealed.split(':');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      return bytes.toString('base64url');
    };
    const alteredText = [...parts.slice(0, 4), flip(parts[4]!)].join(':');
    const alteredTag = [...parts.slice(0, 3), flip(parts[3]!), parts[4]].join(':');
    expect(() => box.open(alteredText, 'ctx')).toThrow(/does not open/);
    expect(() => box.open(alteredTag, 'ctx')).toThrow(/does not open/);
    expect(() => box.open('v1:k1:garbage', 'ctx')).toThrow(/not a sealed value/);
  });

  it('opens a value sealed under a previous key only while that key is listed', () => {
    const old = newKey('old');
    const sealed = createSecretBox({ ENCRYPTION_KEY: old }).seal('hunter2', 'ctx');
    const rotated = createSecretBox({
      ENCRYPTION_KEY: newKey('new'),
      ENCRYPTION_PREVIOUS_KEYS: [old],
    });
    expect(rotated.open(sealed, 'ctx')).toBe('hunter2');
    expect(rotated.keyIdOf(rotated.seal('x', 'ctx'))).toBe('new');

    const forgotten = createSecretBox({ ENCRYPTION_KEY: newKey('new') });
    expect(() => forgotten.open(sealed, 'ctx')).toThrow(/unknown key "old"/);
  });

  it('does not open a value under a listed key id whose key bytes differ', () => {
    const sealed = createSecretBox({ ENCRYPTION_KEY: newKey('k1') }).seal('hunter2', 'ctx');
    expect(() => createSecretBox({ ENCRYPTION_KEY: newKey('k1') }).open(sealed, 'ctx')).toThrow(
      /does not open/,
    );
  });

  it.each([
    ['no key id', randomBytes(32).toString('base64'), /ENCRYPTION_KEY: must be <keyId>:/],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`, /exactly 32 bytes/],
    ['a key that is not base64', 'k1:not base64 at all!!', /exactly 32 bytes/],
    ['a bad key id', `k 1:${randomBytes(32).toString('base64')}`, /key id "k 1"/],
  ])('refuses %s with a message naming the setting', (_case, value, message) => {
    expect(() => createSecretBox({ ENCRYPTION_KEY: value })).toThrow(message);
  });

  it('refuses a previous key with the id of another key', () => {
    expect(() =>
      createSecretBox({ ENCRYPTION_KEY: newKey('k1'), ENCRYPTION_PREVIOUS_KEYS: [newKey('k1')] }),
    ).toThrow(/ENCRYPTION_PREVIOUS_KEYS: key id "k1" is used twice/);
  });
});

describe('encryptionEnv', () => {
  it('reads the current key and a comma list of previous keys', () => {
    const [current, a, b] = [newKey('k3'), newKey('k2'), newKey('k1')];
    const env = encryptionEnv.parse({
      ENCRYPTION_KEY: current,
      ENCRYPTION_PREVIOUS_KEYS: `${a}, ${b}`,
    });
    expect(env).toEqual({ ENCRYPTION_KEY: current, ENCRYPTION_PREVIOUS_KEYS: [a, b] });
    expect(encryptionEnv.parse({ ENCRYPTION_KEY: current }).ENCRYPTION_PREVIOUS_KEYS).toEqual([]);
  });

  it('reports a missing or malformed key as a config problem', () => {
    expect(encryptionEnv.safeParse({}).success).toBe(false);
    const bad = encryptionEnv.safeParse({ ENCRYPTION_KEY: 'k1:short' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/exactly 32 bytes/);
    const badPrevious = encryptionEnv.safeParse({
      ENCRYPTION_KEY: newKey('k1'),
      ENCRYPTION_PREVIOUS_KEYS: 'nokey',
    });
    expect(badPrevious.error?.issues[0]?.path).toEqual(['ENCRYPTION_PREVIOUS_KEYS', 0]);
  });
});
