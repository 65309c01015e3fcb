import { z } from 'zod';
import { validationError } from './errors';
import type { Types } from 'mongoose';

/**
 * Keyset paging, newest first (`createdAt` desc, then `_id` desc; contracts.md, Lists).
 * The cursor is the position of the last item returned, opaque to clients.
 */
export const listQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();

export type ListQuery = z.infer<typeof listQuery>;

export interface CursorPosition {
  createdAt: Date;
  id: string;
  /**
   * The item's place (≥ 1) in a sequence its list keeps itself (the deployments' timeline), for
   * lists that page by it rather than by createdAt and id. Absent otherwise.
   */
  seq?: number;
}

export function encodeCursor(position: CursorPosition): string {
  const fields: unknown[] = [position.createdAt.getTime(), position.id];
  if (position.seq !== undefined) fields.push(position.seq);
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

/** A cursor that was not made by encodeCursor is a validation error, not a 500. */
export function decodeCursor(cursor: string): CursorPosition | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      (value.length === 2 || value.length === 3) &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      /^[0-9a-f]{24}$/.test(value[1])
    ) {
      const position: CursorPosition = { createdAt: new Date(value[0] as number), id: value[1] };
      if (value.length === 2) return position;
      if (Number.isSafeInteger(value[2]) && (value[2] as number) >= 1) {
        return { ...position, seq: value[2] as number };
      }
    }
  } catch {
    // fall through
  }
  return null;
}

/** Decodes a client's cursor; one we did not make is 400 VALIDATION_ERROR. */
export function parseCursor(cursor: string): CursorPosition {
  const position = decodeCursor(cursor);
  if (!position) throw validationError([{ path: 'cursor', message: 'is not a valid cursor' }]);
  return position;
}

/** The filter that selects what comes after `position` in (createdAt desc, _id desc) order. */
export function afterCursorFilter(
  position: CursorPosition,
  toObjectId: (id: string) => Types.ObjectId,
) {
  const id = toObjectId(position.id);
  return {
    $or: [
      { createdAt: { $lt: position.createdAt } },
      { createdAt: position.createdAt, _id: { $lt: id } },
    ],
  };
}

export const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

/**
 * Given `limit + 1` rows fetched in the list's order (NEWEST_FIRST), returns the page and the
 * cursor of the next one (absent on the last page): the last item's position, by default its
 * createdAt and id.
 */
export function toPage<T extends { id: string; createdAt: Date }>(
  rows: T[],
  limit: number,
  positionOf: (row: T) => CursorPosition = (row) => ({ createdAt: row.createdAt, id: row.id }),
): { items: T[]; nextCursor?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(positionOf(items[items.length - 1]!)) };
}
