import { createHmac } from 'node:crypto';
import { USER_AGENT, generateWebhookSecret, signWebhook, webhookHeaders } from './signature';

describe('webhook signing', () => {
  it('matches the published Standard Webhooks test vector', () => {
    const signature = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id.timestamp.body with the base64-decoded part of the secret after whsec_', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const secret = `whsec_${key.toString('base64')}`;
    const body = '{"type":"deployment.status_changed","data":{"status":"DEPLOYED"}}';
    const expected = createHmac('sha256', key).update(`evt-1.1700000000.${body}`).digest('base64');

    expect(signWebhook(secret, 'evt-1', 1700000000, body)).toBe(`v1,${expected}`);
  });

  it('gives a different signature when the body, id or timestamp changes', () => {
    const secret = generateWebhookSecret();
    const reference = signWebhook(secret, 'a', 1, 'x');

    expect(signWebhook(secret, 'a', 1, 'y')).not.toBe(reference);
    expect(signWebhook(secret, 'b', 1, 'x')).not.toBe(reference);
    expect(signWebhook(secret, 'a', 2, 'x')).not.toBe(reference);
  });

  it('refuses a secret without the whsec_ prefix', () => {
    expect(() => signWebhook('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'a', 1, 'x')).toThrow(/whsec_/);
  });

  it('generates secrets of whsec_ and 32 random bytes in base64, never twice the same', () => {
    const first = generateWebhookSecret();
    const second = generateWebhookSecret();

    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(first.slice(6), 'base64')).toHaveLength(32);
    expect(second).not.toBe(first);
  });

  it('builds the headers of an attempt with the unix seconds of that attempt', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([secret], 'evt-7', '{}', 1_700_000_123_999);

    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': 'evt-7',
      'webhook-timestamp': '1700000123',
      'webhook-signature': signWebhook(secret, 'evt-7', 1700000123, '{}'),
    });
  });

  it('signs with each secret of a rotation, space-separated, the current one first', () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();

    const headers = webhookHeaders([current, previous], 'evt-8', '{"a":1}', 1_700_000_000_000);

    expect(headers['webhook-signature']).toBe(
      `${signWebhook(current, 'evt-8', 1700000000, '{"a":1}')} ${signWebhook(previous, 'evt-8', 1700000000, '{"a":1}')}`,
    );
  });

  it('refuses to sign with no secret at all', () => {
    expect(() => webhookHeaders([], 'evt-9', '{}', 0)).toThrow(/at least one secret/);
  });
});
