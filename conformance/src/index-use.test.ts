import { Schema, type Model, type mongo } from 'mongoose';
import { syncIndexes } from '@platform/shared';
import { describePlan, expectIndexServed, explainPlan, type ProductListQuery } from './plan';
import { openTestDatabase, type TestDatabase } from './support/database';
import { NEWEST_FIRST, after, newestFirst, storeListed, type Listed } from './support/keyset';

/**
 * The keyset pages of keyset-paging.test.ts are one index range read at any depth (contracts.md,
 * Lists; libs/shared/src/pagination.ts): the server says so in its own explain. The helper is
 * shown to tell both ways: an `_id` lookup is index-served, a filter on an unindexed field is not.
 */
const BY_SERVICE = 'serviceId_1_createdAt_-1__id_-1';
const BY_SERVICE_AND_STATUS = 'serviceId_1_status_1_createdAt_-1__id_-1';
const PAGE = 21;

describe('The server serves keyset list pages from their index', () => {
  let db: TestDatabase;
  let documents: Listed[];
  let listed: mongo.Collection<Listed>;
  let listedByStatus: mongo.Collection<Listed>;
  /** A position in the middle of svc-a's list: a deep page's cursor. */
  let middle: Listed;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_plans');
    ({ documents, listed, listedByStatus } = await storeListed(db.db, 300, 7));
    const svcA = documents.filter((d) => d.serviceId === 'svc-a').sort(newestFirst);
    middle = svcA[Math.floor(svcA.length / 2)]!;
  });
  afterAll(() => db?.drop());

  test('an _id lookup is served by the _id_ index (the helper sees an index-served plan)', async () => {
    const plan = await expectIndexServed(listed, { filter: { _id: documents[5]!._id } });
    expect(plan.indexNames).toContain('_id_');
  });

  test('a filter on an unindexed field is reported as not index-served (the helper can fail)', async () => {
    const plan = await explainPlan(listed, { status: 'READY' });
    expect({ usesIndex: plan.usesIndex, plan: describePlan(plan) }).toEqual({
      usesIndex: false,
      plan: describePlan(plan),
    });
    await expect(expectIndexServed(listed, { filter: { status: 'READY' } })).rejects.toThrow(
      /not served by an index/,
    );
  });

  test(`the first page, find({serviceId}).sort({createdAt: -1, _id: -1}).limit(${PAGE}), is served by ${BY_SERVICE}`, async () => {
    await expectIndexServed(
      listed,
      { filter: { serviceId: 'svc-a' }, sort: NEWEST_FIRST, limit: PAGE },
      { index: BY_SERVICE },
    );
  });

  test(`a deep page, find({serviceId, $or: [{createdAt: {$lt: T}}, {createdAt: T, _id: {$lt: id}}]}) sorted and limited, is served by ${BY_SERVICE}`, async () => {
    await expectIndexServed(
      listed,
      { filter: { serviceId: 'svc-a', ...after(middle) }, sort: NEWEST_FIRST, limit: PAGE },
      { index: BY_SERVICE },
    );
  });

  test(`the first and a deep page with status: {$in: [...]} are served by ${BY_SERVICE_AND_STATUS}`, async () => {
    const filter = { serviceId: 'svc-a', status: { $in: ['READY', 'FAILED'] } };
    await expectIndexServed(
      listedByStatus,
      { filter, sort: NEWEST_FIRST, limit: PAGE },
      { index: BY_SERVICE_AND_STATUS },
    );
    await expectIndexServed(
      listedByStatus,
      { filter: { ...filter, ...after(middle) }, sort: NEWEST_FIRST, limit: PAGE },
      { index: BY_SERVICE_AND_STATUS },
    );
  });

  describe('from a mongoose model, as product-queries.test.ts will use it', () => {
    type Deployment = Omit<Listed, '_id'>;
    const schema = new Schema<Deployment>({ serviceId: String, status: String, createdAt: Date });
    schema.index({ serviceId: 1, createdAt: -1, _id: -1 });
    let Deployments: Model<Deployment>;

    beforeAll(async () => {
      Deployments = db.connection.model<Deployment>('Deployment', schema);
      await syncIndexes([Deployments]);
      await Deployments.insertMany(documents.map(({ _id: _ignored, ...d }) => d));
    });

    // The pattern of `productListQueries` (plan.ts): each list query as its service builds it.
    const cases: ProductListQuery[] = [
      {
        name: "a service's deployments, first page",
        index: BY_SERVICE,
        query: () => Deployments.find({ serviceId: 'svc-b' }).sort(NEWEST_FIRST).limit(PAGE),
      },
      {
        name: "a service's deployments, a deep page (ids and dates as strings, cast by mongoose)",
        index: BY_SERVICE,
        query: () =>
          Deployments.find({
            serviceId: 'svc-b',
            $or: [
              { createdAt: { $lt: middle.createdAt.toISOString() } },
              { createdAt: middle.createdAt.toISOString(), _id: { $lt: middle._id.toHexString() } },
            ],
          })
            .sort(NEWEST_FIRST)
            .limit(PAGE),
      },
      {
        name: "a service's newest deployment (findOne)",
        index: BY_SERVICE,
        query: () => Deployments.findOne({ serviceId: 'svc-b' }).sort(NEWEST_FIRST),
      },
    ];

    test.each(cases)('$name is served by an index', async (c) => {
      await expectIndexServed(c.query(), c);
    });

    test('a model query on an unindexed field is reported as not index-served', async () => {
      const plan = await explainPlan(Deployments.find({ status: 'READY' }));
      expect({ usesIndex: plan.usesIndex, plan: describePlan(plan) }).toEqual({
        usesIndex: false,
        plan: describePlan(plan),
      });
      const viaModel = await explainPlan(Deployments, { status: 'READY' });
      expect(viaModel.usesIndex).toBe(false);
    });
  });
});
