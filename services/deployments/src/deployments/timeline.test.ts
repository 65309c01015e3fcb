import { Types } from 'mongoose';
import { encodeCursor } from '@platform/shared';
import { startHarness, newCommitHash, type Harness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';
import { timelineEntryId } from './deployments.model';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
}, 60_000);

afterAll(async () => {
  await h.close();
});

interface ListItem {
  id: string;
  status: string;
  createdAt: string;
  deployedAt?: string;
}

/** Every page of the service's list, `limit` at a time: the ids in order and the page sizes. */
async function listAll(service: OwnedService, limit: number) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const res = await h.api.list(
      service,
      `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    sizes.push(res.body.deployments.length);
    ids.push(...res.body.deployments.map((d: ListItem) => d.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  return { ids, sizes };
}

/** Triggers `count` deployments one after another; their ids, oldest first. */
async function triggerMany(service: OwnedService, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await h.api.trigger(service, { commitHash: newCommitHash() });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

/** What a trigger that stopped right after taking its place in the timeline leaves behind. */
const orphanEntry = (service: OwnedService) =>
  h.repository.timeline.append(service, new Types.ObjectId().toHexString(), new Date());

const newestFirst = (ids: string[]) => [...ids].reverse();

describe('the deployments list, read from the service’s timeline', () => {
  it('lists each of many concurrent triggers exactly once, newest first', async () => {
    const service = h.projects.addService();

    const created = await Promise.all(
      Array.from({ length: 30 }, () => h.api.trigger(service, { commitHash: newCommitHash() })),
    );
    const { ids } = await listAll(service, 7);

    expect(created.map((r) => r.status)).toEqual(Array(30).fill(201));
    expect([...ids].sort()).toEqual(created.map((r) => r.body.id).sort());
    const docs = await h.models.deployments.find({ serviceId: service.serviceId }).lean();
    const byCreatedAt = docs
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .map((d) => d._id.toHexString());
    expect(ids).toEqual(byCreatedAt);
    // The timeline has exactly one entry per deployment, numbered 1…30 with no hole.
    expect(docs.map((d) => d.timelineSeq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    expect(await h.models.timeline.countDocuments({ serviceId: service.serviceId })).toBe(30);
  });

  it('answers with the createdAt each deployment was created with', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });

    const res = await h.api.list(service);

    expect(res.body.deployments[0]).toMatchObject({
      id: created.body.id,
      createdAt: created.body.createdAt,
    });
    expect((await h.document(created.body.id))?.createdAt.toISOString()).toBe(
      created.body.createdAt,
    );
  });

  it('skips the entries of triggers that stopped before their deployment, keeping pages full', async () => {
    const service = h.projects.addService();
    const older = await triggerMany(service, 3);
    await orphanEntry(service);
    await orphanEntry(service);
    const newer = await triggerMany(service, 3);
    await orphanEntry(service);

    const first = await h.api.list(service, 'limit=4');
    const { ids, sizes } = await listAll(service, 4);

    expect(first.body.deployments.map((d: ListItem) => d.id)).toEqual(
      newestFirst([...older.slice(2), ...newer]),
    );
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(sizes).toEqual([4, 2]);
    expect(ids).toEqual(newestFirst([...older, ...newer]));
  });

  it('still lists the newest deployment first when the head lags behind', async () => {
    const service = h.projects.addService();
    // Further behind than one probe reads (deployments.timeline.ts, PROBE_WINDOW).
    const first = await triggerMany(service, 12);
    await h.models.timelineHeads.updateOne({ _id: service.serviceId }, { $set: { seq: 1 } });

    const listed = await h.api.list(service, 'limit=2');
    const [latest] = await triggerMany(service, 1);
    await h.models.timelineHeads.deleteOne({ _id: service.serviceId });
    const relisted = await listAll(service, 4);

    expect(listed.body.deployments.map((d: ListItem) => d.id)).toEqual(
      newestFirst(first).slice(0, 2),
    );
    expect(relisted.ids).toEqual(newestFirst([...first, latest!]));
    expect((await h.document(latest!))?.timelineSeq).toBe(13);
  });

  it('lists a deployment once when a repeat of its request races the first', async () => {
    const service = h.projects.addService();
    const headers = { 'Idempotency-Key': `race-${newCommitHash()}` };
    const body = { commitHash: newCommitHash() };

    const responses = await Promise.all(
      Array.from({ length: 6 }, () => h.api.trigger(service, body, headers)),
    );
    const { ids } = await listAll(service, 20);

    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(ids).toEqual([responses[0]!.body.id]);
  });

  it('lists a deployment once when its request is repeated after the first try stopped after the insert', async () => {
    const service = h.projects.addService();
    const key = `after-insert-${newCommitHash()}`;
    const body = { commitHash: newCommitHash() };
    const first = await h.api.trigger(service, body, { 'Idempotency-Key': key });
    // The first try stopped before saving its answer: the key is claimed, with no response.
    await h.models.idempotencyKeys.updateOne(
      { _id: `${service.accountId}:${key}` },
      { $set: { response: null } },
    );

    const repeat = await h.api.trigger(service, body, { 'Idempotency-Key': key });
    const { ids } = await listAll(service, 20);

    expect(repeat.body).toEqual(first.body);
    expect(ids).toEqual([first.body.id]);
    expect(await h.models.timeline.countDocuments({ serviceId: service.serviceId })).toBe(1);
  });

  it('lists a deployment once, at its new place, when its request is repeated after the first try stopped before the insert', async () => {
    const service = h.projects.addService();
    const key = `before-insert-${newCommitHash()}`;
    const body = { commitHash: newCommitHash() };
    const first = await h.api.trigger(service, body, { 'Idempotency-Key': key });
    const id: string = first.body.id;
    // What the first try leaves when it stops after its timeline entry (and queue entry): the
    // key claimed with no response, no deployment, no event.
    await h.models.idempotencyKeys.updateOne(
      { _id: `${service.accountId}:${key}` },
      { $set: { response: null } },
    );
    await h.models.deployments.deleteOne({ _id: id });
    await h.models.transitions.deleteMany({ deploymentId: id });
    const meanwhile = await triggerMany(service, 2);

    const repeat = await h.api.trigger(service, body, { 'Idempotency-Key': key });
    const { ids } = await listAll(service, 2);

    expect(repeat.status).toBe(201);
    expect(repeat.body.id).toBe(id);
    expect(ids).toEqual([id, ...newestFirst(meanwhile)]);
    // The first try's entry names the same deployment, which points at the repeat's entry.
    const stale = await h.models.timeline.findById(timelineEntryId(service.serviceId, 1)).lean();
    expect(stale?.deploymentId).toBe(id);
    expect((await h.document(id))?.timelineSeq).toBe(4);
  });

  it('gives each list item the status a single read gives', async () => {
    const service = h.projects.addService();
    const [building, deploying, deployed, failed, cancelled] = await triggerMany(service, 5);
    const move = async (
      id: string,
      ...statuses: Parameters<Harness['repository']['transition']>[1][]
    ) => {
      for (const status of statuses) {
        const current = await h.repository.findById(id);
        expect(await h.repository.transition(current!, status)).not.toBeNull();
      }
    };
    await move(deploying!, 'DEPLOYING');
    await move(deployed!, 'DEPLOYING', 'DEPLOYED');
    await move(failed!, 'DEPLOYING', 'FAILED');
    expect((await h.api.cancel(service, cancelled!)).status).toBe(200);

    const res = await h.api.list(service);
    const singles = await Promise.all(
      res.body.deployments.map((d: ListItem) => h.api.get(service, d.id)),
    );

    expect(res.body.deployments.map((d: ListItem) => d.status)).toEqual([
      'CANCELLED',
      'FAILED',
      'DEPLOYED',
      'DEPLOYING',
      'BUILDING',
    ]);
    expect(res.body.deployments.map((d: ListItem) => d.id)).toEqual([
      cancelled,
      failed,
      deployed,
      deploying,
      building,
    ]);
    for (const [i, item] of res.body.deployments.entries()) {
      const { logs: _logs, ...single } = singles[i]!.body;
      expect(item).toEqual(single);
    }
    expect(res.body.deployments[2].deployedAt).toEqual(expect.any(String));
  });

  it('continues after a cursor made before the timeline, which names only a deployment', async () => {
    const service = h.projects.addService();
    const ids = await triggerMany(service, 4);
    const third = await h.document(ids[2]!);
    const cursor = encodeCursor({ createdAt: third!.createdAt, id: ids[2]! });

    const res = await h.api.list(service, `cursor=${cursor}`);

    expect(res.status).toBe(200);
    expect(res.body.deployments.map((d: ListItem) => d.id)).toEqual([ids[1], ids[0]]);
  });

  it.each([
    ['a place of 0', (id: string) => encodeCursor({ createdAt: new Date(), id, seq: 0 })],
    [
      'a place that is not an integer',
      (id: string) => Buffer.from(JSON.stringify([Date.now(), id, 2.5])).toString('base64url'),
    ],
    [
      'an old-style cursor of another service’s deployment',
      (id: string) => encodeCursor({ createdAt: new Date(), id }),
    ],
    [
      'an old-style cursor of no deployment',
      () => encodeCursor({ createdAt: new Date(), id: new Types.ObjectId().toHexString() }),
    ],
  ])('answers 400 VALIDATION_ERROR for a cursor with %s', async (_case, cursorFor) => {
    const service = h.projects.addService();
    const other = h.projects.addService(buildService({ accountId: service.accountId }));
    await triggerMany(service, 2);
    const [elsewhere] = await triggerMany(other, 1);

    const res = await h.api.list(service, `cursor=${cursorFor(elsewhere!)}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path: 'cursor', message: 'is not a valid cursor' }],
    });
  });

  it('answers 404 NOT_FOUND to another account, whatever the query, even one that is not valid', async () => {
    const service = h.projects.addService();
    await triggerMany(service, 3);
    const page = await h.api.list(service, 'limit=1');
    const stranger = buildService({ projectId: service.projectId, serviceId: service.serviceId });

    for (const query of [
      '',
      `limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`,
      'limit=0',
      'cursor=not-a-cursor',
      `cursor=${encodeCursor({ createdAt: new Date(), id: new Types.ObjectId().toHexString() })}`,
    ]) {
      const res = await h.api.list(stranger, query);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'NOT_FOUND', message: expect.any(String) });
    }
  });

  it('reads a page by _id only: every query of a first and a deep page plans an index', async () => {
    const service = h.projects.addService();
    const ids = await triggerMany(service, 6);
    const explained = [
      h.models.timelineHeads.findById(service.serviceId, { seq: 1 }),
      h.repository.timeline.entriesQuery(service.serviceId, [14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4]),
      h.repository.timeline.entriesQuery(service.serviceId, [3, 2, 1]),
      h.repository.deploymentsQuery(ids),
      h.repository.statusChangesQuery(ids),
    ];

    for (const query of explained) {
      const plan = JSON.stringify(await query.explain());
      expect(plan).toMatch(/USING INDEX|IDHACK|IXSCAN/);
      expect(plan).not.toMatch(/COLLSCAN|detail=SCAN /);
    }
    // And those are the queries that give the page.
    const entries = await h.repository.timeline.entries(service.serviceId, [3, 2, 1]);
    expect(entries.map((e) => e.deploymentId).sort()).toEqual(ids.slice(0, 3).sort());
  });
});

describe('a deleted project or service', () => {
  it('takes its timeline with it and leaves the others’', async () => {
    const gone = h.projects.addService();
    const sibling = h.projects.addService(
      buildService({ accountId: gone.accountId, projectId: gone.projectId }),
    );
    const elsewhere = h.projects.addService(buildService({ accountId: gone.accountId }));
    for (const service of [gone, sibling, elsewhere]) await triggerMany(service, 2);
    const timelineOf = async (s: OwnedService) => [
      await h.models.timeline.countDocuments({ serviceId: s.serviceId }),
      await h.models.timelineHeads.countDocuments({ _id: s.serviceId }),
    ];

    await h.service.removeServiceDeployments(gone.accountId, gone.projectId, gone.serviceId);
    const afterService = [await timelineOf(gone), await timelineOf(sibling)];
    await h.service.removeProjectDeployments(gone.accountId, gone.projectId);

    expect(afterService).toEqual([
      [0, 0],
      [2, 1],
    ]);
    expect(await timelineOf(sibling)).toEqual([0, 0]);
    expect(await timelineOf(elsewhere)).toEqual([2, 1]);
    expect((await h.api.list(elsewhere)).body.deployments).toHaveLength(2);
  });

  it('starts a new timeline for a service whose deployments were removed', async () => {
    const service = h.projects.addService();
    await triggerMany(service, 3);
    await h.service.removeServiceDeployments(
      service.accountId,
      service.projectId,
      service.serviceId,
    );

    const [id] = await triggerMany(service, 1);

    expect((await h.api.list(service)).body.deployments.map((d: ListItem) => d.id)).toEqual([id]);
    expect((await h.document(id!))?.timelineSeq).toBe(1);
  });
});
