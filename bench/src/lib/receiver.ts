import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  /** Epoch ms (fractional) when the whole body had arrived. */
  at: number;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: any;
  signatureValid: boolean;
}

/**
 * Standard Webhooks verification, from the specification: `v1,` + base64 HMAC-SHA256 over
 * `id.timestamp.body`, keyed by the base64-decoded secret after `whsec_`.
 */
export function verifySignature(secret: string, headers: IncomingHttpHeaders, rawBody: string) {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  if (!id || !/^\d+$/.test(timestamp)) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((candidate) => {
      const [version, value] = candidate.split(',');
      if (version !== 'v1' || !value) return false;
      const given = Buffer.from(value, 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * A webhook receiver on 127.0.0.1: notes the arrival time of every request, checks its
 * signature once the secret is known, and answers 204.
 */
export async function startReceiver(onArrival: (arrival: Arrival) => void) {
  let secret = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const rawBody = Buffer.concat(chunks).toString('utf8');
      res.writeHead(204).end();
      let body: unknown = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        // counted as unsigned garbage below
      }
      onArrival({
        at,
        headers: req.headers,
        rawBody,
        body,
        signatureValid: secret !== '' && verifySignature(secret, req.headers, rawBody),
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    setSecret: (value: string) => {
      secret = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
