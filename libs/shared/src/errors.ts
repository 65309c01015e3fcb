/**
 * The one error type of the platform. Thrown anywhere, turned into the contract's JSON body
 * `{ error, message, details? }` by `errorHandler` (see http/error-handler.ts) and nowhere else.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. `Retry-After` on 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toBody(): ErrorBody {
    return this.details
      ? { error: this.code, message: this.message, details: this.details }
      : { error: this.code, message: this.message };
  }
}

/** Every error code of the API (contracts.md, Status codes and errors), in one list. */
export const ERROR_CODES = [
  'UNAUTHORIZED',
  'INVALID_REQUEST',
  'VALIDATION_ERROR',
  'CSRF_FAILED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: ErrorDetail[];
}

export const unauthorized = (message = 'Login is required: sign in to continue.') =>
  new AppError('UNAUTHORIZED', 401, message);

export const invalidRequest = (message: string) => new AppError('INVALID_REQUEST', 400, message);

export const validationError = (details: ErrorDetail[], message = 'The request is not valid.') =>
  new AppError('VALIDATION_ERROR', 400, message, details);

export const csrfFailed = (message = 'The CSRF token does not match.') =>
  new AppError('CSRF_FAILED', 403, message);

export const forbidden = (message = 'This request is not allowed.') =>
  new AppError('FORBIDDEN', 403, message);

export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', 404, `${what} not found.`);

/** A method the path does not have; `Allow` lists the ones it has (RFC 9110, 15.5.6). */
export const methodNotAllowed = (method: string, allowed: string[]) =>
  new AppError(
    'METHOD_NOT_ALLOWED',
    405,
    `${method} is not allowed here: use ${allowed.join(', ')}.`,
    undefined,
    { Allow: allowed.join(', ') },
  );

export const conflict = (message: string) => new AppError('CONFLICT', 409, message);

export const payloadTooLarge = (message = 'The request body is larger than 100 KiB.') =>
  new AppError('PAYLOAD_TOO_LARGE', 413, message);

export const rateLimited = (retryAfterSeconds: number) =>
  new AppError('RATE_LIMITED', 429, 'Too many requests: slow down and retry later.', undefined, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

export const serviceUnavailable = (
  message = 'A dependency is unavailable: retry shortly.',
  retryAfterSeconds?: number,
) =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    503,
    message,
    undefined,
    retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) },
  );

export const internal = (message = 'Something went wrong on our side.') =>
  new AppError('INTERNAL', 500, message);
