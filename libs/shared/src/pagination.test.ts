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

  it('round-trips a position with its place in a sequence, and still reads one without', () => {
    const position = { createdAt: new Date(1_700_000_000_000), id: 'c'.repeat(24), seq: 50_000 };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    const { seq: _seq, ...withoutSeq } = position;
    expect(decodeCursor(encodeCursor(withoutSeq))).toEqual(withoutSeq);
    expect(decodeCursor(encodeCursor(withoutSeq))).not.toHaveProperty('seq');
  });

  it.each([
    '',
    'not-base64!',
    Buffer.from('{"a":1}').toString('base64url'),
    Buffer.from('[1,"zz"]').toString('base64url'),
    Buffer.from(`[1,"${'a'.repeat(24)}",0]`).toString('base64url'),
    Buffer.from(`[1,"${'a'.repeat(24)}",1.5]`).toString('base64url'),
    Buffer.from(`[1,"${'a'.repeat(24)}","7"]`).toString('base64url'),
    Buffer.from(`[1,"${'a'.repeat(24)}",7,8]`).toString('base64url'),
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

  it('makes the next cursor from the position the list gives its last item', () => {
    const rows = [item(1), item(2), item(3)].map((row, i) => ({ ...row, seq: 30 - i }));
    const page = toPage(rows, 2, (row) => ({ createdAt: row.createdAt, id: row.id, seq: row.seq }));
    expect(decodeCursor(page.nextCursor!)).toEqual({
      createdAt: rows[1]!.createdAt,
      id: rows[1]!.id,
      seq: 29,
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
