import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The `webhook-signature` header value: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`,
 * keyed by the decoded secret. `timestampSeconds` is the attempt's own `webhook-timestamp`.
 */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

export const USER_AGENT = 'platform-webhooks/1.0';

/**
 * Every header of one attempt; the body bytes are the ones fixed when the delivery was recorded.
 * `secrets`: the webhook's current secret, then its previous one during a rotation's overlap;
 * `webhook-signature` carries one `v1,` signature for each, space-separated (Standard Webhooks),
 * so a receiver holding either secret verifies it.
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  if (secrets.length === 0) throw new Error('a webhook is signed with at least one secret');
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets
      .map((secret) => signWebhook(secret, id, timestamp, body))
      .join(' '),
  };
}
