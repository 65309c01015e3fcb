import { summarizePlan } from './plan';

/**
 * How the helper reads explain outputs, on the formats it will meet: MongoDB 7's (classic and
 * slot-based engine, sharded), MongoDB 8's express stages, and FerretDB's SQLite plan rows. No
 * server here: these are the servers' outputs as they come, trimmed to what matters.
 */
const BY_SERVICE = 'serviceId_1_createdAt_-1__id_-1';
const byServiceScan = (bounds: Record<string, string[]>) => ({
  stage: 'IXSCAN',
  keyPattern: { serviceId: 1, createdAt: -1, _id: -1 },
  indexName: BY_SERVICE,
  isMultiKey: false,
  direction: 'forward',
  indexBounds: bounds,
});
const serviceBounds = {
  serviceId: ['["svc-a", "svc-a"]'],
  createdAt: ['[MaxKey, MinKey]'],
  _id: ['[MaxKey, MinKey]'],
};
const mongo = (winningPlan: unknown) => ({
  explainVersion: '1',
  queryPlanner: { namespace: 'db.listed', winningPlan, rejectedPlans: [] },
  serverInfo: { version: '7.0.14' },
  ok: 1,
});
const sqlite = (...details: string[]) => ({
  queryPlanner: {
    Plan: details.map((d, i) => `id=${i + 2} parent=0 notused=0 detail=${d}`),
  },
  explainVersion: '1',
  filterPushdown: false,
  ok: 1,
});

describe('Reading a MongoDB plan', () => {
  test('LIMIT > FETCH > IXSCAN bounded by the filter is index-served by that index', () => {
    const plan = summarizePlan(
      mongo({
        stage: 'LIMIT',
        limitAmount: 21,
        inputStage: { stage: 'FETCH', inputStage: byServiceScan(serviceBounds) },
      }),
    );
    expect(plan).toMatchObject({
      engine: 'mongodb',
      usesIndex: true,
      indexName: BY_SERVICE,
      fullIndexScan: false,
      stages: ['LIMIT', 'FETCH', 'IXSCAN'],
    });
  });

  test('the slot-based engine nests the same tree under queryPlan', () => {
    const plan = summarizePlan(
      mongo({
        queryPlan: { stage: 'FETCH', planNodeId: 2, inputStage: byServiceScan(serviceBounds) },
        slotBasedPlan: { slots: '$$RESULT=s7', stages: '[2] nlj inner [] [s2] ...' },
      }),
    );
    expect(plan).toMatchObject({ usesIndex: true, indexName: BY_SERVICE });
  });

  test('an OR of index scans merged for the sort (a deep keyset page) is index-served', () => {
    const plan = summarizePlan(
      mongo({
        stage: 'SUBPLAN',
        inputStage: {
          stage: 'LIMIT',
          inputStage: {
            stage: 'FETCH',
            inputStage: {
              stage: 'SORT_MERGE',
              inputStages: [
                byServiceScan({ ...serviceBounds, createdAt: ['(new Date(5), new Date(-9e15)]'] }),
                byServiceScan({
                  ...serviceBounds,
                  createdAt: ['[new Date(5), new Date(5)]'],
                  _id: ["(ObjectId('6a00'), ObjectId('000000000000000000000000')]"],
                }),
              ],
            },
          },
        },
      }),
    );
    expect(plan).toMatchObject({
      usesIndex: true,
      indexNames: [BY_SERVICE, BY_SERVICE],
      fullIndexScan: false,
    });
  });

  test('a COLLSCAN is not index-served, alone or beside an index scan', () => {
    expect(
      summarizePlan(mongo({ stage: 'COLLSCAN', filter: { status: { $eq: 'READY' } } })),
    ).toMatchObject({ usesIndex: false, indexNames: [], stages: ['COLLSCAN'] });
    expect(
      summarizePlan(
        mongo({
          stage: 'SUBPLAN',
          inputStage: {
            stage: 'OR',
            inputStages: [byServiceScan(serviceBounds), { stage: 'COLLSCAN' }],
          },
        }),
      ),
    ).toMatchObject({ usesIndex: false });
  });

  test('IDHACK (MongoDB 7) and EXPRESS_IXSCAN (MongoDB 8) read the _id_ index', () => {
    expect(summarizePlan(mongo({ stage: 'IDHACK' }))).toMatchObject({
      usesIndex: true,
      indexName: '_id_',
    });
    expect(
      summarizePlan(
        mongo({ stage: 'EXPRESS_IXSCAN', keyPattern: '{ _id: 1 }', indexName: '_id_' }),
      ),
    ).toMatchObject({ usesIndex: true, indexName: '_id_', fullIndexScan: false });
  });

  test('an IXSCAN with no bounds is a full index scan', () => {
    const unbounded = {
      serviceId: ['[MinKey, MaxKey]'],
      createdAt: ['[MaxKey, MinKey]'],
      _id: ['[MaxKey, MinKey]'],
    };
    expect(
      summarizePlan(mongo({ stage: 'FETCH', inputStage: byServiceScan(unbounded) })),
    ).toMatchObject({ usesIndex: true, fullIndexScan: true });
  });

  test('a sharded plan is read through its shards; EOF (no collection) is no index', () => {
    expect(
      summarizePlan(
        mongo({
          stage: 'SINGLE_SHARD',
          shards: [{ shardName: 'rs0', winningPlan: byServiceScan(serviceBounds) }],
        }),
      ),
    ).toMatchObject({ usesIndex: true, indexName: BY_SERVICE });
    expect(summarizePlan(mongo({ stage: 'EOF' }))).toMatchObject({ usesIndex: false });
  });
});

describe('Reading a FerretDB (SQLite) plan', () => {
  test('SEARCH ... USING INDEX is index-served, named as MongoDB names the index', () => {
    const plan = summarizePlan(
      sqlite('SEARCH items_3a79338f USING INDEX items_3a79338f__id_ (<expr>=?)'),
    );
    expect(plan).toMatchObject({
      engine: 'sqlite',
      usesIndex: true,
      indexName: '_id_',
      fullIndexScan: false,
    });
  });

  test('a bare SCAN of the table is not index-served', () => {
    expect(summarizePlan(sqlite('SCAN items_3a79338f'))).toMatchObject({
      engine: 'sqlite',
      usesIndex: false,
      indexNames: [],
    });
  });

  test('a compound query whose every part searches the index is index-served', () => {
    const plan = summarizePlan(
      sqlite(
        'COMPOUND QUERY',
        'LEFT-MOST SUBQUERY',
        `SEARCH items_3a79338f USING INDEX items_3a79338f_${BY_SERVICE} (<expr>=?)`,
        'UNION ALL',
        `SEARCH items_3a79338f USING INDEX items_3a79338f_${BY_SERVICE} (<expr>=? AND <expr><?)`,
      ),
    );
    expect(plan).toMatchObject({
      usesIndex: true,
      indexNames: [BY_SERVICE, BY_SERVICE],
      stages: expect.arrayContaining(['COMPOUND QUERY', 'UNION ALL']),
    });
  });

  test('a part that scans the table makes the whole not index-served; a sort in a temporary b-tree does not', () => {
    expect(
      summarizePlan(
        sqlite(
          'MULTI-INDEX OR',
          'INDEX 1',
          'SEARCH items_3a USING INDEX items_3a__id_ (<expr>=?)',
          'INDEX 2',
          'SCAN items_3a',
        ),
      ),
    ).toMatchObject({ usesIndex: false });
    expect(
      summarizePlan(
        sqlite(
          'SEARCH items_3a USING INDEX items_3a_serviceId_1 (<expr>=?)',
          'USE TEMP B-TREE FOR ORDER BY',
        ),
      ),
    ).toMatchObject({ usesIndex: true, indexName: 'serviceId_1' });
  });

  test('SCAN ... USING INDEX is a full index scan; a json_each over a parameter is no table', () => {
    expect(summarizePlan(sqlite(`SCAN items_3a USING INDEX items_3a_${BY_SERVICE}`))).toMatchObject(
      { usesIndex: true, fullIndexScan: true },
    );
    expect(
      summarizePlan(
        sqlite(
          'SEARCH items_3a USING INDEX items_3a_status_1 (<expr>=?)',
          'LIST SUBQUERY 1',
          'SCAN json_each VIRTUAL TABLE INDEX 1:',
        ),
      ),
    ).toMatchObject({ usesIndex: true, indexName: 'status_1' });
  });

  test('an explain with no plan the helper knows is not index-served', () => {
    expect(summarizePlan({ queryPlanner: {}, ok: 1 })).toMatchObject({
      engine: 'unknown',
      usesIndex: false,
    });
  });
});
