import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateSigningKey } from './keys';

describe('loadOrCreateSigningKey', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dev-idp-keys-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes a new key to KEY_FILE, readable by its owner only, and loads the same key next time', async () => {
    const keyFile = join(dir, 'nested', 'key.pem');

    const first = await loadOrCreateSigningKey(keyFile);
    const second = await loadOrCreateSigningKey(keyFile);

    expect(second.kid).toBe(first.kid);
    expect(second.publicKey.equals(first.publicKey)).toBe(true);
    expect(await readFile(keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('makes a new in-memory key each time without a KEY_FILE', async () => {
    const [a, b] = await Promise.all([loadOrCreateSigningKey(), loadOrCreateSigningKey()]);

    expect(a.kid).not.toBe(b.kid);
  });
});
