import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Where the gateway reads the document it serves (committed; `npm run openapi` writes it). */
export const DOCUMENT_FILE = join(__dirname, '../../../services/gateway/openapi.json');

/**
 * The document as committed: JSON formatted by the repository's prettier settings, so that
 * `prettier --check .` agrees with the generator. Prettier's own command (a child process: its
 * API loads its plugins with a dynamic import, which jest's module system cannot run).
 */
export function formatDocument(document: unknown): string {
  return execFileSync(
    process.execPath,
    [require.resolve('prettier/bin/prettier.cjs'), '--stdin-filepath', DOCUMENT_FILE],
    { input: JSON.stringify(document), encoding: 'utf8' },
  );
}
