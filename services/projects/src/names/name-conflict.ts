import { isDuplicateKeyError } from '@platform/shared';

/**
 * True when a write broke a unique index. MongoDB says so with code 11000; FerretDB does for
 * inserts, but reports a violation on an update as an internal error, recognised by its message.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (isDuplicateKeyError(err)) return true;
  const message = (err as { message?: unknown })?.message;
  return typeof message === 'string' && /duplicate key|UNIQUE constraint failed/i.test(message);
}
