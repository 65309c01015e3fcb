import type { mongo } from 'mongoose';
import { openTestDatabase, type TestDatabase } from './support/database';
import { SERVICES, newestFirst, pageThrough, storeListed, type Listed } from './support/keyset';

/**
 * Keyset paging newest first (libs/shared/src/pagination.ts): `find({serviceId, $or: [{createdAt:
 * {$lt: T}}, {createdAt: T, _id: {$lt: id}}]}).sort({createdAt: -1, _id: -1}).limit(n)` from the
 * last document of the previous page. Many documents share a `createdAt`, so `_id` decides, and
 * a page boundary often falls among equal times. Every document must come exactly once, in the
 * order the sort defines, at any depth.
 */
const DOCUMENTS = 2_000;
const TIMEOUT_MS = 120_000;
const IN_STATUSES = ['READY', 'FAILED'];
const SMALLEST = SERVICES[2];

/** How a paged-through sequence differs from the expected one (all zero / null when it does not). */
function compare(pages: Listed[][], expected: Listed[], pageSize: number) {
  const got = pages.flat().map((d) => d._id.toHexString());
  const want = expected.map((d) => d._id.toHexString());
  const wanted = new Set(want);
  const counts = new Map<string, number>();
  for (const id of got) counts.set(id, (counts.get(id) ?? 0) + 1);
  const at = got.findIndex((id, i) => id !== want[i]);
  return {
    returned: got.length,
    duplicates: [...counts.values()].filter((n) => n > 1).length,
    missing: want.filter((id) => !counts.has(id)).length,
    foreign: got.filter((id) => !wanted.has(id)).length,
    firstDifference: at === -1 ? null : { at, got: got[at] ?? null, want: want[at] ?? null },
    shortPagesBeforeTheEnd: pages.slice(0, -1).filter((p) => p.length !== pageSize).length,
  };
}

const perfect = (expected: Listed[]) => ({
  returned: expected.length,
  duplicates: 0,
  missing: 0,
  foreign: 0,
  firstDifference: null,
  shortPagesBeforeTheEnd: 0,
});

describe('Keyset paging newest first over a compound index', () => {
  let db: TestDatabase;
  let documents: Listed[];
  let listed: mongo.Collection<Listed>;
  let listedByStatus: mongo.Collection<Listed>;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_keyset');
    ({ documents, listed, listedByStatus } = await storeListed(db.db, DOCUMENTS, 20260101));
  }, TIMEOUT_MS);
  afterAll(() => db?.drop());

  test('the data has many equal createdAt values within every service', () => {
    for (const serviceId of SERVICES) {
      const mine = documents.filter((d) => d.serviceId === serviceId);
      const times = new Set(mine.map((d) => d.createdAt.getTime()));
      expect(mine.length).toBeGreaterThan(250);
      expect(mine.length / times.size).toBeGreaterThan(10);
    }
  });

  /**
   * Pages of 7 and 100 through every service; pages of 1 (a boundary after every document)
   * through the smallest, since the local stand-in reads the whole collection for each page.
   */
  const walks = [
    { pageSize: 100, services: SERVICES },
    { pageSize: 7, services: SERVICES },
    { pageSize: 1, services: [SMALLEST] },
  ];

  /**
   * Pages through `collection` for each of `services` with the filter `filterOf` gives it,
   * `pageSize` at a time, and expects exactly its documents that `matches` selects, newest first.
   */
  async function expectWalks(
    collection: mongo.Collection<Listed>,
    { pageSize, services }: (typeof walks)[number],
    filterOf: (serviceId: string) => mongo.Filter<Listed>,
    matches: (d: Listed) => boolean,
  ) {
    const results = await Promise.all(
      services.map(async (serviceId) => {
        const expected = documents
          .filter((d) => d.serviceId === serviceId && matches(d))
          .sort(newestFirst);
        const pages = await pageThrough(
          collection,
          filterOf(serviceId),
          pageSize,
          expected.length + 2,
        );
        return {
          got: { serviceId, ...compare(pages, expected, pageSize) },
          want: { serviceId, ...perfect(expected) },
        };
      }),
    );
    expect(results.map((r) => r.got)).toEqual(results.map((r) => r.want));
  }

  test.each(walks)(
    'pages of $pageSize, {serviceId} filter, index {serviceId: 1, createdAt: -1, _id: -1}: every document of the service comes exactly once, in (createdAt desc, _id desc) order ($services)',
    (walk) =>
      expectWalks(
        listed,
        walk,
        (serviceId) => ({ serviceId }),
        () => true,
      ),
    TIMEOUT_MS,
  );

  test.each(walks)(
    `pages of $pageSize, {serviceId, status: {$in: [${IN_STATUSES}]}} filter, index {serviceId: 1, status: 1, createdAt: -1, _id: -1}: every matching document comes exactly once, in order ($services)`,
    (walk) =>
      expectWalks(
        listedByStatus,
        walk,
        (serviceId) => ({ serviceId, status: { $in: IN_STATUSES } }),
        (d) => IN_STATUSES.includes(d.status),
      ),
    TIMEOUT_MS,
  );
});
