import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export type { Logger } from 'pino';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Never log these: session cookies, the internal identity, OAuth credentials, webhook secrets. */
const REDACT = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-platform-identity"]',
  'res.headers["set-cookie"]',
  '*.credential',
  '*.secret',
  '*.password',
];

export function createLogger(service: string, level = 'info'): Logger {
  return pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' } });
}

const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

export interface HttpLoggerOptions {
  /**
   * The level of a request answered 2xx or 3xx; default `info`. The gateway logs its successes
   * at `debug`: the service behind logs the same request under the same `x-request-id`.
   * Errors and 4xx/5xx keep their levels.
   */
  successLevel?: 'info' | 'debug';
}

/**
 * pino-http with a request id: the caller's `x-request-id` when it is well-formed, else a new
 * one; echoed on the response so it can be quoted, and forwarded by the gateway to services.
 */
export function httpLogger(logger: Logger, { successLevel = 'info' }: HttpLoggerOptions = {}) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers[REQUEST_ID_HEADER];
      const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
      req.headers[REQUEST_ID_HEADER] = id;
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    customLogLevel(_req, res, err) {
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode >= 400) return 'warn';
      return successLevel;
    },
    autoLogging: { ignore: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
