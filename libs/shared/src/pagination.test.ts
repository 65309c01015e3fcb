import { Types } from 'mongoose';
import { afterCursorFilter, decodeCursor, encodeCursor, parseCursor, toPage } from './pagination';
import { AppError } from './errors';

const item = (n: number) => ({
  id: new Types.ObjectId().toHexString(),
  createdAt: new Date(1_700_000_000_000 - n * 1000),
});

describe('cursor paging', () => {
  it('round-trips a position through an opaque cursor', () => {
    const position = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'a'.repeat(24) };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
  });

  it.each([
    '',
    'not-base64!',
    Buffer.from('{"a":1}').toString('base64url'),
    Buffer.from('[1,"zz"]').toString('base64url'),
  ])('rejects the cursor %j that it did not make', (cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
    expect(() => parseCursor(cursor)).toThrow(AppError);
  });

  it('returns a next cursor only when more rows than the limit were fetched', () => {
    const rows = [item(1), item(2), item(3)];
    expect(toPage(rows, 3)).toEqual({ items: rows });
    const page = toPage(rows, 2);
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(decodeCursor(page.nextCursor!)).toEqual({
      createdAt: rows[1]!.createdAt,
      id: rows[1]!.id,
    });
  });

  it('selects strictly older rows, and same-time rows with a smaller id', () => {
    const position = { createdAt: new Date(1000), id: 'b'.repeat(24) };
    const filter = afterCursorFilter(position, (id) => new Types.ObjectId(id));
    expect(filter).toEqual({
      $or: [
        { createdAt: { $lt: position.createdAt } },
        { createdAt: position.createdAt, _id: { $lt: new Types.ObjectId(position.id) } },
      ],
    });
  });
});
