import { z } from 'zod';
import { Types, type FilterQuery, type Model } from 'mongoose';
import { validationError } from './errors';

/**
 * Keyset paging, newest first (`createdAt` desc, then `_id` desc; contracts.md, Lists). Every
 * list has an index that starts with its equality fields and ends `createdAt: -1, _id: -1`, so a
 * page is one index range read at any depth. The cursor is the position of the last item
 * returned, opaque to clients.
 */
export const listQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe(
        "Page size. Without it: projects and services return all of the account's (at most the quota); deployments return the newest 20.",
      ),
    cursor: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Opaque cursor from a previous page's `nextCursor`; an invalid one is 400 VALIDATION_ERROR.",
      ),
  })
  .strict();

export type ListQuery = z.infer<typeof listQuery>;

export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.getTime(), position.id])).toString(
    'base64url',
  );
}

/** A cursor that was not made by encodeCursor is null. */
export function decodeCursor(cursor: string): CursorPosition | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      /^[0-9a-f]{24}$/.test(value[1])
    ) {
      return { createdAt: new Date(value[0] as number), id: value[1] };
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
export function afterCursorFilter(position: CursorPosition) {
  const id = new Types.ObjectId(position.id);
  return {
    $or: [
      { createdAt: { $lt: position.createdAt } },
      { createdAt: position.createdAt, _id: { $lt: id } },
    ],
  };
}

export const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

/** What a list document has at least: the keyset fields. */
export interface Pageable {
  _id: Types.ObjectId;
  createdAt: Date;
}

export interface Page<T> {
  items: T[];
  /** Present when more remain. */
  nextCursor?: string;
}

export interface PageRequest {
  /** Absent: every match (for lists bounded by a quota). */
  limit?: number;
  /** As the client sent it; parsed here (an invalid one is 400). */
  cursor?: string;
}

/**
 * One page of `model`'s documents matching `filter` (equality conditions, no `$or` of its own),
 * newest first: a `limit + 1` read after the cursor, so the caller learns whether another page
 * follows without a count.
 */
export async function findPage<D extends Pageable>(
  model: Model<D>,
  filter: FilterQuery<D>,
  request: PageRequest,
  projection?: Record<string, 0 | 1>,
): Promise<Page<D>> {
  const after = request.cursor ? afterCursorFilter(parseCursor(request.cursor)) : {};
  let query = model.find({ ...filter, ...after } as FilterQuery<D>, projection).sort(NEWEST_FIRST);
  if (request.limit !== undefined) query = query.limit(request.limit + 1);
  const rows = (await query.lean()) as unknown as D[];
  if (request.limit === undefined || rows.length <= request.limit) return { items: rows };
  const items = rows.slice(0, request.limit);
  const last = items[items.length - 1]!;
  return {
    items,
    nextCursor: encodeCursor({ createdAt: last.createdAt, id: last._id.toHexString() }),
  };
}

/** The same page with its items mapped (to the API's shape). */
export const mapPage = <T, U>(page: Page<T>, map: (item: T) => U): Page<U> => ({
  items: page.items.map(map),
  ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
});

/**
 * A list response as the API shapes every list (contracts.md, Lists): the items under their
 * plural name, mapped to their API shape, and `nextCursor` only when another page follows.
 */
export function listResponse<K extends string, T, U>(
  key: K,
  page: Page<T>,
  map: (item: T) => U,
): { [P in K]: U[] } & { nextCursor?: string } {
  return {
    [key]: page.items.map(map),
    ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
  } as { [P in K]: U[] } & { nextCursor?: string };
}

/**
 * The schema of a list response (contracts.md, Lists), as `listResponse` makes it: the items
 * under their plural name and `nextCursor` when another page follows.
 */
export function listResponseSchema<K extends string, T extends z.ZodTypeAny>(key: K, item: T) {
  const shape = {
    [key]: z.array(item),
    nextCursor: z.string().optional().describe('Present when more remain.'),
  } as { [P in K]: z.ZodArray<T> } & { nextCursor: z.ZodOptional<z.ZodString> };
  return z.object(shape).strict();
}
