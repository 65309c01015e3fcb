import express, { type RequestHandler } from 'express';
import { invalidRequest } from '../errors';

export const BODY_LIMIT = '100kb';

/** Parses JSON bodies up to 100 KiB; larger ones become 413 PAYLOAD_TOO_LARGE. */
export const jsonBody = (): RequestHandler => express.json({ limit: BODY_LIMIT, strict: true });

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A request that carries a body must say it is JSON; form posts and text are 400. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (hasBody(req.headers) && !req.is('application/json')) {
    next(invalidRequest('The request body must be application/json.'));
    return;
  }
  next();
};
