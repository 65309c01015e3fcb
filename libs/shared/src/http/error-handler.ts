import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import type { Logger } from 'pino';
import {
  AppError,
  internal,
  invalidRequest,
  notFound,
  payloadTooLarge,
  serviceUnavailable,
  validationError,
} from '../errors';
import { issuesToDetails } from './validation';

const DEPENDENCY_ERROR_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MaxRetriesPerRequestError',
  'KafkaJSConnectionError',
  'KafkaJSNumberOfRetriesExceeded',
]);

/** True for errors that mean "a database, broker or cache did not answer", not "we have a bug". */
export function isDependencyDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (DEPENDENCY_ERROR_NAMES.has(err.name)) return true;
  return /buffering timed out|Connection is closed|Stream isn't writeable|Command timed out|ECONNREFUSED/.test(
    err.message,
  );
}

/** Maps anything thrown into an AppError: the single place where errors become HTTP. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof z.ZodError) return validationError(issuesToDetails(err));
  const e = err as { type?: string; status?: number; statusCode?: number };
  // body-parser marks its errors with a `type`.
  if (e?.type === 'entity.too.large') return payloadTooLarge();
  if (e?.type === 'entity.parse.failed')
    return invalidRequest('The request body is not valid JSON.');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return invalidRequest('The request body encoding is not supported.');
  }
  if (isDependencyDown(err)) return serviceUnavailable();
  const status = e?.status ?? e?.statusCode;
  if (status === 404) return notFound();
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return invalidRequest('The request is not valid.');
  }
  return internal();
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    const appError = toAppError(err);
    if (appError.status >= 500) {
      const log = (req as { log?: Logger }).log ?? logger;
      log.error({ err, reqId: (req as { id?: unknown }).id }, 'request failed: %s', appError.code);
    }
    if (res.headersSent) {
      next(err);
      return;
    }
    if (appError.headers) res.set(appError.headers);
    res.status(appError.status).json(appError.toBody());
  };
}

/** The last route: anything unmatched is a JSON 404, never express's HTML page. */
export const notFoundHandler: RequestHandler = (_req, _res, next) => next(notFound('Route'));
