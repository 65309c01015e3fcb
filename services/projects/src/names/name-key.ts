/**
 * Names are unique case-insensitively (contracts.md, Validation), so each document also stores
 * a normalised key (trimmed, lower-cased) under a unique index. NFC first, so "é" typed as one or
 * two code points is the same name.
 */
export function nameKeyOf(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/**
 * The key a deleted document keeps until the cascade removes it: it frees the name at once and
 * stays unique. It starts with a control character, which no valid name contains, so it can
 * never equal a live name's key.
 */
export function deletedNameKeyOf(id: string): string {
  return `\u0000deleted:${id}`;
}
