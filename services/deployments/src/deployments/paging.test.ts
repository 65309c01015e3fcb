import { startHarness, newCommitHash, type Harness } from '../test/harness';
import type { OwnedService } from '../test/projects-stub';

let h: Harness;
let service: OwnedService;
/** The ids of the service's 120 deployments, newest first as the API must list them. */
let expectedOrder: string[];

const TOTAL = 120;

beforeAll(async () => {
  h = await startHarness();
  service = h.projects.addService();
  for (let batch = 0; batch < TOTAL / 10; batch++) {
    const created = await Promise.all(
      Array.from({ length: 10 }, () => h.api.trigger(service, { commitHash: newCommitHash() })),
    );
    expect(created.every((r) => r.status === 201)).toBe(true);
  }
  // Ties on createdAt, where keyset paging usually breaks, cannot happen any more: each of a
  // service's deployments is created later than the one before it in its timeline, even ten
  // at the same moment (deployments.timeline.ts). The expected order is still taken from the
  // documents as contracts.md states it (createdAt desc, then id), not from the timeline.
  const docs = await h.models.deployments
    .find({ serviceId: service.serviceId }, { _id: 1, createdAt: 1 })
    .lean();
  expectedOrder = docs
    .sort(
      (a, b) =>
        b.createdAt.getTime() - a.createdAt.getTime() ||
        (b._id.toHexString() < a._id.toHexString() ? -1 : 1),
    )
    .map((d) => d._id.toHexString());
}, 60_000);

afterAll(async () => {
  await h.close();
});

describe('paging through a service’s deployments', () => {
  it('walks all 120 with limit=25 in order, with no duplicate and no gap', async () => {
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await h.api.list(
        service,
        `limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      pageSizes.push(res.body.deployments.length);
      seen.push(...res.body.deployments.map((d: { id: string }) => d.id));
      cursor = res.body.nextCursor;
    } while (cursor);

    expect(pageSizes).toEqual([25, 25, 25, 25, 20]);
    expect(new Set(seen).size).toBe(TOTAL);
    expect(seen).toEqual(expectedOrder);
  });

  it('gives every deployment its own createdAt, even those triggered at the same moment', async () => {
    const docs = await h.models.deployments
      .find({ serviceId: service.serviceId }, { createdAt: 1 })
      .lean();

    expect(new Set(docs.map((d) => d.createdAt.getTime())).size).toBe(TOTAL);
  });

  it('gives the newest 20 and a nextCursor without a limit', async () => {
    const res = await h.api.list(service);

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['deployments', 'nextCursor']);
    expect(res.body.deployments.map((d: { id: string }) => d.id)).toEqual(
      expectedOrder.slice(0, 20),
    );
    expect(res.body.nextCursor).toEqual(expect.any(String));
  });

  it('omits nextCursor on a page that reaches the end exactly', async () => {
    const first = await h.api.list(service, 'limit=100');
    const rest = await h.api.list(
      service,
      `limit=20&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );

    expect(first.body.deployments).toHaveLength(100);
    expect(rest.status).toBe(200);
    expect(rest.body.deployments.map((d: { id: string }) => d.id)).toEqual(
      expectedOrder.slice(100),
    );
    expect(rest.body).not.toHaveProperty('nextCursor');
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'sort=asc'])(
    'answers 400 VALIDATION_ERROR for %s',
    async (query) => {
      const res = await h.api.list(service, query);

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'VALIDATION_ERROR',
        message: expect.any(String),
        details: expect.any(Array),
      });
    },
  );

  it('answers 400 VALIDATION_ERROR for a cursor it did not make', async () => {
    const res = await h.api.list(service, 'cursor=not-a-cursor');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path: 'cursor', message: 'is not a valid cursor' }],
    });
  });
});
