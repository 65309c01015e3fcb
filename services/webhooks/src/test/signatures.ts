import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReceivedRequest } from './receiver';

/**
 * Verifies a received webhook the way a receiver following Standard Webhooks does, written
 * here independently of the service's signing code: HMAC-SHA256 over `id.timestamp.body` with
 * the base64-decoded secret after `whsec_`, compared with each `v1,` signature, and a
 * timestamp within five minutes.
 */
export function verifyStandardWebhook(
  secret: string,
  request: ReceivedRequest,
  nowMs = Date.now(),
): boolean {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signatures = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string')
    return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.split('_')[1]!, 'base64');
  const expected = Buffer.from(
    createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest('base64'),
  );
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
