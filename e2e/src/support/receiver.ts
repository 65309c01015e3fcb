import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: any;
}

/**
 * A webhook receiver on 127.0.0.1 that records every request it accepts and answers 204. While
 * `accepting()` says no, it answers 503 instead and only counts the request as refused.
 */
export async function startReceiver(options: { accepting?: () => boolean } = {}) {
  const accepting = options.accepting ?? (() => true);
  const received: ReceivedWebhook[] = [];
  let refused = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!accepting()) {
        refused += 1;
        res.writeHead(503).end();
        return;
      }
      const rawBody = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, rawBody, body: JSON.parse(rawBody) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The Standard Webhooks check, written from the specification rather than taken from the
 * service: HMAC-SHA256 over `id.timestamp.body`, keyed by the base64 secret after `whsec_`.
 */
export function verifyStandardWebhook(
  secret: string,
  webhook: ReceivedWebhook,
  toleranceSeconds = 300,
): boolean {
  const id = String(webhook.headers['webhook-id'] ?? '');
  const timestamp = String(webhook.headers['webhook-timestamp'] ?? '');
  const signatures = String(webhook.headers['webhook-signature'] ?? '').split(' ');
  if (!id || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${id}.${timestamp}.${webhook.rawBody}`)
    .digest();
  return signatures.some((s) => {
    const [version, value] = s.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
