import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createSigningKey, exportSigningKey, importSigningKey, type SigningKey } from '../tokens';

/**
 * The key from `keyFile` when it exists, else a new one written there (owner-only), so a
 * restart keeps the certificates that services have cached. Without a file: in memory only.
 */
export async function loadOrCreateSigningKey(keyFile?: string): Promise<SigningKey> {
  if (!keyFile) return createSigningKey();
  try {
    return importSigningKey(await readFile(keyFile, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = createSigningKey();
  await mkdir(dirname(keyFile), { recursive: true });
  await writeFile(keyFile, exportSigningKey(key), { mode: 0o600, flag: 'wx' });
  return key;
}
