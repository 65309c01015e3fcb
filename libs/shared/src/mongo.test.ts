import { Schema, type Connection } from 'mongoose';
import { connectMongo, isDuplicateKeyError, parseObjectId, pingMongo, syncIndexes } from './mongo';
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

  it('answers a ping', async () => {
    await expect(pingMongo(connection)).resolves.toBeUndefined();
  });

  it('round-trips documents and rejects a duplicate on a unique index', async () => {
    const Widget = connection.model<Widget>('Widget', widgetSchema);
    await syncIndexes([Widget]);
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
    const Widget = connection.model<Widget>('Widget', widgetSchema);
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

  it('treats a malformed id as not found', () => {
    expect(parseObjectId('507f1f77bcf86cd799439011').toHexString()).toBe(
      '507f1f77bcf86cd799439011',
    );
    for (const bad of ['', 'abc', '507f1f77bcf86cd79943901z', '{"$gt":""}']) {
      expect(() => parseObjectId(bad, 'Project')).toThrow(AppError);
    }
  });
});
