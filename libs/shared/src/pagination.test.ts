import { Types } from 'mongoose';
import {
  afterCursorFilter,
  decodeCursor,
  encodeCursor,
  listResponse,
  listResponseSchema,
  mapPage,
  parseCursor,
} from './pagination';
import { z } from 'zod';
import { AppError } from './errors';

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
    Buffer.from('[1.5,"' + 'a'.repeat(24) + '"]').toString('base64url'),
    Buffer.from(`[1,"${'a'.repeat(24)}",7]`).toString('base64url'),
    Buffer.from(`["1","${'a'.repeat(24)}"]`).toString('base64url'),
  ])('rejects the cursor %j that it did not make', (cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
    expect(() => parseCursor(cursor)).toThrow(AppError);
  });

  it('selects strictly older rows, and same-time rows with a smaller id', () => {
    const position = { createdAt: new Date(1000), id: 'b'.repeat(24) };
    expect(afterCursorFilter(position)).toEqual({
      $or: [
        { createdAt: { $lt: position.createdAt } },
        { createdAt: position.createdAt, _id: { $lt: new Types.ObjectId(position.id) } },
      ],
    });
  });

  it('maps a page’s items and keeps its next cursor, and has none when the page has none', () => {
    expect(mapPage({ items: [1, 2], nextCursor: 'c' }, (n) => n * 10)).toEqual({
      items: [10, 20],
      nextCursor: 'c',
    });
    expect(mapPage({ items: [1] }, String)).toEqual({ items: ['1'] });
  });

  it('shapes a list response: items under their name, nextCursor only when a page follows', () => {
    expect(listResponse('projects', { items: [1, 2], nextCursor: 'c' }, (n) => ({ n }))).toEqual({
      projects: [{ n: 1 }, { n: 2 }],
      nextCursor: 'c',
    });
    expect(listResponse('projects', { items: [] }, String)).toStrictEqual({ projects: [] });
  });

  it('describes the list response it shapes, and nothing else', () => {
    const schema = listResponseSchema('projects', z.object({ n: z.number() }).strict());
    const shaped = (page: { items: number[]; nextCursor?: string }) =>
      listResponse('projects', page, (n) => ({ n }));

    expect(schema.safeParse(shaped({ items: [1, 2], nextCursor: 'c' })).success).toBe(true);
    expect(schema.safeParse(shaped({ items: [] })).success).toBe(true);
    expect(schema.safeParse({ items: [{ n: 1 }] }).success).toBe(false);
    expect(schema.safeParse({ projects: [], nextCursor: 'c', total: 1 }).success).toBe(false);
  });
});
