/** What a secret's value becomes in a log (contracts.md "Variables"). */
export const MASK = '****';

/**
 * Replaces every secret value in a stream of output with `****`. Output arrives in chunks that
 * may split a value anywhere, so the end of a chunk that could be the start of a value is held
 * back until the next chunk (or `flush()`) shows whether it is one: no part of a value is ever
 * let through, whichever way the writes fell.
 */
export class SecretMask {
  private readonly secrets: string[];
  private pending = '';

  constructor(secrets: Iterable<string>) {
    // Longest first, so a value that contains another is masked whole.
    this.secrets = [...new Set(secrets)]
      .filter((s) => s.length > 0)
      .sort((a, b) => b.length - a.length);
  }

  /** The masked text that can be shown now. */
  write(chunk: string): string {
    if (this.secrets.length === 0) return chunk;
    const text = this.mask(this.pending + chunk);
    const held = this.heldBack(text);
    this.pending = text.slice(text.length - held);
    return text.slice(0, text.length - held);
  }

  /** The rest, masked: the output has ended. */
  flush(): string {
    const rest = this.mask(this.pending);
    this.pending = '';
    return rest;
  }

  private mask(text: string): string {
    let masked = text;
    for (const secret of this.secrets) masked = masked.split(secret).join(MASK);
    return masked;
  }

  /** Length of the longest end of `text` that is a proper start of some secret. */
  private heldBack(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let n = Math.min(secret.length - 1, text.length); n > longest; n--) {
        if (text.endsWith(secret.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
