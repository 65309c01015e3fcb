import { Schema, type Connection } from 'mongoose';
import {
  connectMongo,
  defineModel,
  isDuplicateKeyError,
  parseObjectId,
  pingMongo,
  syncIndexes,
} from './mongo';
import { AppError } from './errors';
import { testInfraUrls, testLogger, uniqueName } from './testing';

interface Widget {
  owner: string;
  name: string;
  size: number;
  createdAt: Date;
}

const widgetSchema = new Schema<Widget>({
  owner: { type: String, required: true },
  name: { type: String, required: true },
  size: { type: Number, required: true },
  createdAt: { type: Date, default: () => new Date() },
});
widgetSchema.index({ owner: 1, name: 1 }, { unique: true });
const widgetModel = defineModel<Widget>('Widget', widgetSchema, 'widgets');

describe('MongoDB through mongoose (real server)', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: uniqueName('shared_mongo'),
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  it('registers a defined model once per connection, on the collection it names', async () => {
    const other = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: uniqueName('shared_mongo_other'),
      logger: testLogger(),
    });
    try {
      expect(widgetModel(connection)).toBe(widgetModel(connection));
      expect(widgetModel(other)).not.toBe(widgetModel(connection));
      expect(widgetModel(other).collection.collectionName).toBe('widgets');
    } finally {
      await other.close();
    }
  });

  it('answers a ping', async () => {
    await expect(pingMongo(connection)).resolves.toBeUndefined();
  });

  it('round-trips documents and rejects a duplicate on a unique index', async () => {
    const Widget = widgetModel(connection);
    await syncIndexes({ widgets: Widget });
    const created = await Widget.create({ owner: 'a', name: 'gear', size: 3 });
    const found = await Widget.findById(created._id).lean();
    expect(found).toMatchObject({ owner: 'a', name: 'gear', size: 3 });
    expect(found?.createdAt).toBeInstanceOf(Date);

    const duplicate = await Widget.create({ owner: 'a', name: 'gear', size: 4 }).catch(
      (err: unknown) => err,
    );
    expect(isDuplicateKeyError(duplicate)).toBe(true);
    // Another owner may use the same name.
    await expect(Widget.create({ owner: 'b', name: 'gear', size: 4 })).resolves.toBeDefined();
    expect(await Widget.countDocuments({ name: 'gear' })).toBe(2);
  });

  it('applies a conditional update only while its condition holds', async () => {
    const Widget = widgetModel(connection);
    const created = await Widget.create({ owner: 'c', name: 'cog', size: 1 });
    const first = await Widget.findOneAndUpdate(
      { _id: created._id, size: 1 },
      { $set: { size: 2 } },
      { new: true },
    ).lean();
    const second = await Widget.findOneAndUpdate(
      { _id: created._id, size: 1 },
      { $set: { size: 3 } },
      { new: true },
    ).lean();
    expect(first?.size).toBe(2);
    expect(second).toBeNull();
  });

  // FerretDB (the local stand-in) only uses its `_id` index with scripts/infra/ferretdb/patches/.
  it('finds by _id through the _id index, alone, with other conditions and with $in', async () => {
    const Widget = widgetModel(connection);
    const made = await Widget.insertMany(
      Array.from({ length: 300 }, (_, i) => ({ owner: 'idx', name: `w${i}`, size: i % 2 })),
    );
    const [a, b, c] = [made[10]!, made[11]!, made[250]!];
    const queries = [
      { filter: { _id: a._id }, names: ['w10'] },
      { filter: { _id: b._id, size: 1 }, names: ['w11'] },
      { filter: { _id: b._id, size: 0 }, names: [] },
      { filter: { _id: { $in: [a._id, c._id] } }, names: ['w10', 'w250'] },
    ];
    for (const { filter, names } of queries) {
      const found = await Widget.find(filter).sort({ name: 1 }).lean();
      expect(found.map((w) => w.name)).toEqual(names);
      // The plan names the index: SQLite's "SEARCH … USING INDEX" on FerretDB, IDHACK or an
      // index scan on MongoDB; never a scan of the whole collection.
      const plan = JSON.stringify(await Widget.find(filter).explain());
      expect(plan).toMatch(/USING INDEX|IDHACK|IXSCAN/);
      expect(plan).not.toMatch(/COLLSCAN|detail=SCAN /);
    }
  });

  it('treats a malformed id as not found', () => {
    expect(parseObjectId('507f1f77bcf86cd799439011').toHexString()).toBe(
      '507f1f77bcf86cd799439011',
    );
    for (const bad of ['', 'abc', '507f1f77bcf86cd79943901z', '{"$gt":""}']) {
      expect(() => parseObjectId(bad, 'Project')).toThrow(AppError);
    }
  });
});
