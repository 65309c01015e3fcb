import { Types } from 'mongoose';
import { encodeCursor } from '@platform/shared';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';
import { NO_LEASE } from './deployments.model';
import type { DeploymentStatus } from './status';

const h = useHarness();
let service: OwnedService;
/** The service's deployments, newest first as the API must list them (createdAt desc, then id). */
let expected: { id: string; status: DeploymentStatus }[];

const TRIGGERED = 20;
const INSERTED = 120;
const TOTAL = TRIGGERED + INSERTED;
/** The inserted ones share these few instants: ties on createdAt, where keyset paging breaks. */
const INSTANTS = 6;
const STATUSES: DeploymentStatus[] = ['DEPLOYED', 'FAILED', 'CANCELLED', 'BUILDING', 'DEPLOYING'];

/** A deployment document as the API and the pipeline leave it, at a chosen time and status. */
function storedDeployment(owned: OwnedService, createdAt: Date, status: DeploymentStatus) {
  return {
    _id: new Types.ObjectId(),
    ...owned,
    commitHash: newCommitHash(),
    commitMessage: '',
    status,
    createdAt,
    statusChangedAt: createdAt,
    deployedAt: status === 'DEPLOYED' ? createdAt : null,
    leaseOwner: null,
    leaseUntil: NO_LEASE,
    attempts: 0,
    handedBack: 0,
    outbox: [],
    outboxPending: false,
  };
}

beforeAll(async () => {
  service = h.projects.addService();
  // Some through the API, ten at a time (the same millisecond is likely among them)...
  for (let batch = 0; batch < TRIGGERED / 10; batch++) {
    const created = await Promise.all(
      Array.from({ length: 10 }, () => h.api.trigger(service, { commitHash: newCommitHash() })),
    );
    expect(created.every((r) => r.status === 201)).toBe(true);
  }
  // ...the rest stored as they are after they ran: earlier, many at the very same instant.
  const base = Date.now() - 60 * 60 * 1000;
  await h.models.deployments.insertMany(
    Array.from({ length: INSERTED }, (_, i) =>
      storedDeployment(
        service,
        new Date(base + (i % INSTANTS) * 1000),
        STATUSES[i % STATUSES.length]!,
      ),
    ),
  );
  // Another service's deployments at the same instants, never to appear.
  const other = h.projects.addService(buildService({ accountId: service.accountId }));
  await h.models.deployments.insertMany(
    Array.from({ length: 12 }, (_, i) =>
      storedDeployment(other, new Date(base + (i % INSTANTS) * 1000), 'FAILED'),
    ),
  );

  const docs = await h.models.deployments
    .find({ serviceId: service.serviceId }, { _id: 1, createdAt: 1, status: 1 })
    .lean();
  expected = docs
    .sort(
      (a, b) =>
        b.createdAt.getTime() - a.createdAt.getTime() ||
        (b._id.toHexString() < a._id.toHexString() ? -1 : 1),
    )
    .map((d) => ({ id: d._id.toHexString(), status: d.status }));
}, 60_000);

/** Every page of the list with this query, followed cursor by cursor. */
async function walk(query: string) {
  const pages: { id: string; status: DeploymentStatus }[][] = [];
  let cursor: string | undefined;
  do {
    const res = await h.api.list(
      service,
      [query, cursor && `cursor=${encodeURIComponent(cursor)}`].filter(Boolean).join('&'),
    );
    expect(res.status).toBe(200);
    pages.push(res.body.deployments);
    cursor = res.body.nextCursor;
    if (cursor !== undefined) expect(cursor).toEqual(expect.any(String));
  } while (cursor);
  return pages;
}

const ids = (items: { id: string }[]) => items.map((d) => d.id);
const sizes = (total: number, limit: number) =>
  Array.from({ length: Math.ceil(total / limit) }, (_, i) => Math.min(limit, total - i * limit));

describe('paging through a service’s deployments', () => {
  it('is tested on many deployments sharing one createdAt, where keyset paging breaks', async () => {
    const docs = await h.models.deployments
      .find({ serviceId: service.serviceId }, { createdAt: 1 })
      .lean();
    const byInstant = new Map<number, number>();
    for (const d of docs) {
      const t = d.createdAt.getTime();
      byInstant.set(t, (byInstant.get(t) ?? 0) + 1);
    }

    expect(docs).toHaveLength(TOTAL);
    expect(Math.max(...byInstant.values())).toBeGreaterThanOrEqual(INSERTED / INSTANTS);
  });

  it.each([1, 7, 25, 100])(
    'walks all of them with limit=%i: each once, in order, at every depth',
    async (limit) => {
      const pages = await walk(`limit=${limit}`);

      expect(pages.map((p) => p.length)).toEqual(sizes(TOTAL, limit));
      expect(ids(pages.flat())).toEqual(ids(expected));
    },
  );

  it('gives the newest 20 and a nextCursor without a limit', async () => {
    const res = await h.api.list(service);

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['deployments', 'nextCursor']);
    expect(ids(res.body.deployments)).toEqual(ids(expected.slice(0, 20)));
    expect(res.body.nextCursor).toEqual(expect.any(String));
  });

  it('omits nextCursor on a page that reaches the end exactly', async () => {
    const first = await h.api.list(service, 'limit=100');
    const rest = await h.api.list(
      service,
      `limit=${TOTAL - 100}&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );

    expect(first.body.deployments).toHaveLength(100);
    expect(rest.status).toBe(200);
    expect(ids(rest.body.deployments)).toEqual(ids(expected.slice(100)));
    expect(rest.body).not.toHaveProperty('nextCursor');
  });

  it('goes on after a cursor in the middle of a run of equal createdAt values', async () => {
    // The 20 that share the newest inserted instant follow the triggered ones: cut into them.
    const cut = TRIGGERED + 10;
    const res = await h.api.list(service, `limit=${cut}`);
    const next = await h.api.list(
      service,
      `limit=15&cursor=${encodeURIComponent(res.body.nextCursor)}`,
    );

    expect(ids(res.body.deployments)).toEqual(ids(expected.slice(0, cut)));
    expect(ids(next.body.deployments)).toEqual(ids(expected.slice(cut, cut + 15)));
  });
});

describe('?status= with limit and cursor', () => {
  it.each([
    ['FAILED,CANCELLED', 7],
    ['DEPLOYED', 5],
    ['BUILDING,DEPLOYING', 10],
    ['DEPLOYED,FAILED,CANCELLED,BUILDING,DEPLOYING', 33],
  ])(
    'walks only the deployments in %s, %i at a time, each once and in order',
    async (status, limit) => {
      const wanted = expected.filter((d) => status.split(',').includes(d.status));

      const pages = await walk(`status=${status}&limit=${limit}`);

      expect(wanted.length).toBeGreaterThan(limit);
      expect(pages.map((p) => p.length)).toEqual(sizes(wanted.length, limit));
      expect(ids(pages.flat())).toEqual(ids(wanted));
      for (const d of pages.flat()) expect(status.split(',')).toContain(d.status);
    },
  );

  it('answers an empty list when no deployment is in that status', async () => {
    const fresh = h.projects.addService();
    await h.api.trigger(fresh, { commitHash: newCommitHash() });

    const res = await h.api.list(fresh, 'status=DEPLOYED');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deployments: [] });
  });

  it.each(['BOGUS', 'FAILED,NOPE', '', 'FAILED,'])(
    'answers 400 VALIDATION_ERROR for the unknown status "%s"',
    async (status) => {
      const res = await h.api.list(service, `status=${status}`);

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'VALIDATION_ERROR',
        message: expect.any(String),
        details: expect.arrayContaining([
          { path: expect.stringMatching(/^status/), message: expect.any(String) },
        ]),
      });
    },
  );
});

describe('invalid list queries', () => {
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

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['a position without an id', Buffer.from('[1700000000000]').toString('base64url')],
    ['an id that is not one', Buffer.from('[1700000000000,"zz"]').toString('base64url')],
    [
      'a time that is not a number',
      Buffer.from('["yesterday","0123456789abcdef01234567"]').toString('base64url'),
    ],
    [
      'an old cursor with a sequence number',
      Buffer.from('[1700000000000,"0123456789abcdef01234567",4]').toString('base64url'),
    ],
  ])('answers 400 VALIDATION_ERROR for a cursor it did not make: %s', async (_case, cursor) => {
    const res = await h.api.list(service, `limit=5&cursor=${encodeURIComponent(cursor)}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path: 'cursor', message: 'is not a valid cursor' }],
    });
  });

  it('accepts any position it could have made, even one past every deployment', async () => {
    const cursor = encodeCursor({ createdAt: new Date(0), id: new Types.ObjectId().toHexString() });

    const res = await h.api.list(service, `cursor=${encodeURIComponent(cursor)}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deployments: [] });
  });

  it('answers 404, not 400, to another account whatever it asks', async () => {
    const stranger = { ...service, accountId: buildService().accountId };

    const responses = await Promise.all([
      h.api.list(stranger),
      h.api.list(stranger, 'cursor=not-a-cursor'),
      h.api.list(stranger, 'status=BOGUS'),
    ]);

    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    }
  });
});
