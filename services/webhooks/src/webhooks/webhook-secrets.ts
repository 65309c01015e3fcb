import type { SecretBox } from '@platform/shared';

/** What a webhook's secrets are read from: its stored (sealed, or legacy clear) values. */
export interface StoredSecrets {
  id: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The sealed values of a webhook's secrets, as stored. */
export interface SealedSecrets {
  secret: string;
  previousSecret: string | null;
}

const CLEAR_PREFIX = 'whsec_';

/**
 * The contexts a webhook's secrets are sealed with: bound to the webhook and to the field, so a
 * sealed value copied onto another webhook (or from `previousSecret` to `secret`) does not open.
 */
export const webhookSecretContext = (webhookId: string) => `webhook-secret:${webhookId}`;
export const previousWebhookSecretContext = (webhookId: string) =>
  `webhook-previous-secret:${webhookId}`;

/**
 * Stored secrets that do not open: sealed under a key that is neither ENCRYPTION_KEY nor one of
 * ENCRYPTION_PREVIOUS_KEYS, or altered. Never signed around, never sealed over.
 */
export class SecretUnreadableError extends Error {
  constructor(
    readonly webhookIds: string[],
    reason: string,
  ) {
    const shown = webhookIds.slice(0, 10).join(', ') + (webhookIds.length > 10 ? ', …' : '');
    super(
      `the signing secret of ${webhookIds.length} webhook(s) (${shown}) cannot be opened with ` +
        `ENCRYPTION_KEY or ENCRYPTION_PREVIOUS_KEYS: ${reason}`,
    );
    this.name = 'SecretUnreadableError';
  }
}

/**
 * Seals and opens webhook signing secrets with the shared SecretBox (ENCRYPTION_KEY). A value
 * stored in clear by an earlier version (`whsec_…`) is read as it is until `reseal` replaces it.
 */
export class WebhookSecrets {
  /** The id of ENCRYPTION_KEY: values sealed under another key are sealed anew. */
  readonly currentKeyId: string;

  constructor(private readonly box: SecretBox) {
    this.currentKeyId = box.currentKeyId;
  }

  seal(webhookId: string, secret: string): string {
    return this.box.seal(secret, webhookSecretContext(webhookId));
  }

  sealPrevious(webhookId: string, secret: string): string {
    return this.box.seal(secret, previousWebhookSecretContext(webhookId));
  }

  /** The current secret in clear; throws SecretUnreadableError when it cannot be opened. */
  open(webhook: Pick<StoredSecrets, 'id' | 'secret'>): string {
    return this.openValue(webhook.id, webhook.secret, webhookSecretContext(webhook.id));
  }

  /**
   * The secrets a delivery is signed with at `now`: the current one, and the previous one while
   * its overlap lasts (each gives a `v1,` signature).
   */
  signingSecrets(webhook: StoredSecrets, now: Date): string[] {
    const secrets = [this.open(webhook)];
    const { previousSecret, previousSecretExpiresAt } = webhook;
    if (previousSecret && previousSecretExpiresAt && previousSecretExpiresAt > now) {
      secrets.push(
        this.openValue(webhook.id, previousSecret, previousWebhookSecretContext(webhook.id)),
      );
    }
    return secrets;
  }

  /** Whether a stored value is in clear or sealed under another key than ENCRYPTION_KEY. */
  isStale(stored: string): boolean {
    if (stored.startsWith(CLEAR_PREFIX)) return true;
    try {
      return this.box.keyIdOf(stored) !== this.currentKeyId;
    } catch {
      return true;
    }
  }

  /**
   * The webhook's secrets sealed under ENCRYPTION_KEY (an expired previous secret dropped), or
   * null when they already are. Throws SecretUnreadableError when one cannot be opened.
   */
  reseal(webhook: StoredSecrets, now: Date): SealedSecrets | null {
    const previousLive =
      webhook.previousSecret !== null &&
      webhook.previousSecretExpiresAt !== null &&
      webhook.previousSecretExpiresAt > now;
    const stale =
      this.isStale(webhook.secret) ||
      (webhook.previousSecret !== null && (!previousLive || this.isStale(webhook.previousSecret)));
    if (!stale) return null;
    const secret = this.isStale(webhook.secret)
      ? this.seal(webhook.id, this.open(webhook))
      : webhook.secret;
    let previousSecret: string | null = null;
    if (previousLive && webhook.previousSecret) {
      previousSecret = this.isStale(webhook.previousSecret)
        ? this.sealPrevious(
            webhook.id,
            this.openValue(
              webhook.id,
              webhook.previousSecret,
              previousWebhookSecretContext(webhook.id),
            ),
          )
        : webhook.previousSecret;
    }
    return { secret, previousSecret };
  }

  private openValue(webhookId: string, stored: string, context: string): string {
    if (stored.startsWith(CLEAR_PREFIX)) return stored;
    try {
      return this.box.open(stored, context);
    } catch (err) {
      throw new SecretUnreadableError(
        [webhookId],
        err instanceof Error ? err.message : String(err),
      );
    }
  }
}
