import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * Secrets at rest (secret variables, webhook secrets): AES-256-GCM under a key with an id, so
 * keys can rotate. A sealed value is one string `v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url
 * parts), sealed with associated data naming what it is (`variable:<serviceId>:<name>`): a sealed
 * value copied onto another record does not open there.
 */
export interface SecretBox {
  /** Encrypts `plain` under the current key, bound to `context`. */
  seal(plain: string, context: string): string;
  /** Decrypts a sealed value; throws when it was sealed for another context, altered, or under an unknown key. */
  open(sealed: string, context: string): string;
  /** The id of the key a sealed value was sealed under (to find values still under an old key). */
  keyIdOf(sealed: string): string;
  /** The id of ENCRYPTION_KEY: what new values are sealed under. */
  readonly currentKeyId: string;
}

/**
 * The context a secret variable is sealed with: projects seals it, the deployment pipeline opens
 * it with the same context just before it enters a sandboxed process's environment.
 */
export const variableSecretContext = (serviceId: string, name: string) =>
  `variable:${serviceId}:${name}`;

/** What createSecretBox reads: the current key and the old keys kept for decryption only. */
export interface SecretBoxConfig {
  ENCRYPTION_KEY: string;
  ENCRYPTION_PREVIOUS_KEYS?: readonly string[];
}

const VERSION = 'v1';
// Printable, without the separators of the key (`:`) and of the list (`,`).
const KEY_ID = /^[!-+\--9;-~]{1,64}$/;
const KEY_FORMAT = '<keyId>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32)';

interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** A key in the form `<keyId>:<base64 of 32 bytes>`; throws a message that says what is wrong. */
function parseKey(text: string): EncryptionKey {
  const separator = text.indexOf(':');
  if (separator < 0) throw new Error(`must be ${KEY_FORMAT}`);
  const id = text.slice(0, separator);
  const encoded = text.slice(separator + 1);
  if (!KEY_ID.test(id)) {
    throw new Error(
      `key id "${id}" must be 1-64 printable characters other than ":" and "," (${KEY_FORMAT})`,
    );
  }
  const key = Buffer.from(encoded, 'base64');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) || key.length !== 32) {
    throw new Error(`key "${id}" must be the base64 of exactly 32 bytes (${KEY_FORMAT})`);
  }
  return { id, key };
}

const keyText = z.string().superRefine((value, ctx) => {
  try {
    parseKey(value.trim());
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
  }
});

/**
 * The environment of a service that seals or opens secrets. Merge into its config schema:
 * `serviceEnv(...).merge(encryptionEnv)`.
 */
export const encryptionEnv = z.object({
  /** The current key, `<keyId>:<base64 of 32 random bytes>`: new values are sealed with it. */
  ENCRYPTION_KEY: keyText.transform((v) => v.trim()),
  /**
   * Comma list of older keys in the same form, used only to open values sealed before a
   * rotation. Default: none.
   */
  ENCRYPTION_PREVIOUS_KEYS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(keyText)),
});

/**
 * A SecretBox over the configured keys. Throws (with a message naming the setting) when a key is
 * malformed or two keys share an id.
 */
export function createSecretBox(config: SecretBoxConfig): SecretBox {
  const current = parseSetting('ENCRYPTION_KEY', config.ENCRYPTION_KEY);
  const keys = new Map<string, Buffer>([[current.id, current.key]]);
  for (const text of config.ENCRYPTION_PREVIOUS_KEYS ?? []) {
    const previous = parseSetting('ENCRYPTION_PREVIOUS_KEYS', text);
    if (keys.has(previous.id)) {
      throw new Error(`ENCRYPTION_PREVIOUS_KEYS: key id "${previous.id}" is used twice`);
    }
    keys.set(previous.id, previous.key);
  }

  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, current.id, b64(iv), b64(tag), b64(ciphertext)].join(':');
    },
    open(sealed, context) {
      const { keyId, iv, tag, ciphertext } = splitSealed(sealed);
      const key = keys.get(keyId);
      if (!key) throw new Error(`a sealed value names an unknown key "${keyId}"`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('a sealed value does not open: altered, or sealed for another record');
      }
    },
    keyIdOf(sealed) {
      return splitSealed(sealed).keyId;
    },
    currentKeyId: current.id,
  };
}

function parseSetting(name: string, text: string): EncryptionKey {
  try {
    return parseKey(text.trim());
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`);
  }
}

function b64(buffer: Buffer): string {
  return buffer.toString('base64url');
}

function splitSealed(sealed: string) {
  const parts = sealed.split(':');
  if (parts.length !== 5 || parts[0] !== VERSION) throw new Error('not a sealed value');
  const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
  const ivBytes = Buffer.from(iv, 'base64url');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (ivBytes.length !== 12 || tagBytes.length !== 16) throw new Error('not a sealed value');
  return { keyId, iv: ivBytes, tag: tagBytes, ciphertext: Buffer.from(ciphertext, 'base64url') };
}
