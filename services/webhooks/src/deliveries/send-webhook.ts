import http from 'node:http';
import https from 'node:https';
import type { EgressGuard } from '../egress/egress-guard';

/** What one attempt produced, as recorded in the delivery's attempt log. */
export interface AttemptOutcome {
  statusCode: number | null;
  durationMs: number;
  /** The start of the receiver's answer, capped: enough to debug, never a stored copy. */
  responseExcerpt: string;
  error: string | null;
}

export const RESPONSE_EXCERPT_BYTES = 1024;

export interface SendWebhookOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  guard: EgressGuard;
  /** Aborts the attempt (shutdown). */
  signal?: AbortSignal;
}

export const isSuccess = (statusCode: number | null) =>
  statusCode !== null && statusCode >= 200 && statusCode < 300;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * POSTs one webhook attempt. Never follows a redirect (a 3xx is a failure: following it could
 * lead anywhere), gives up after `timeoutMs` for the whole exchange, and never throws: every
 * problem becomes the outcome's `error`.
 */
export function sendWebhook(options: SendWebhookOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (err: unknown): AttemptOutcome => ({
    statusCode: null,
    durationMs: elapsed(),
    responseExcerpt: '',
    error: messageOf(err),
  });

  let url: URL;
  let lookup: ReturnType<EgressGuard['dialOptions']>['lookup'];
  try {
    url = new URL(options.url);
    ({ lookup } = options.guard.dialOptions(url));
  } catch (err) {
    return Promise.resolve(failed(err));
  }
  const transport = url.protocol === 'https:' ? https : http;

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
        agent: false,
        lookup,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answered = () => {
          const statusCode = response.statusCode ?? null;
          const redirected = statusCode !== null && statusCode >= 300 && statusCode < 400;
          finish({
            statusCode,
            durationMs: elapsed(),
            responseExcerpt: Buffer.concat(chunks)
              .subarray(0, RESPONSE_EXCERPT_BYTES)
              .toString('utf8'),
            error: redirected ? 'redirects are not followed' : null,
          });
          request.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_EXCERPT_BYTES) answered();
        });
        response.on('end', answered);
        response.on('error', answered);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const onAbort = () => request.destroy(new Error('aborted: the service is shutting down'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err) => finish(failed(err)));
    request.end(options.body);
  });
}
