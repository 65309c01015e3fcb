import type { mongo } from 'mongoose';
import { openTestDatabase, type TestDatabase } from './support/database';

/**
 * The array updates the product's single-document writes rely on: `$push` with `$each` and
 * `$slice` keeps a bounded log in one update (the webhooks attempt log); an equality on the whole
 * array, and `$pullAll`, take out exactly the entries given and keep one pushed meanwhile (the
 * outbox relay).
 */
interface Doc {
  _id: number;
  log: unknown[];
}

describe('The server applies array updates as MongoDB documents them', () => {
  let db: TestDatabase;
  let docs: mongo.Collection<Doc>;
  let next = 0;
  const insert = async (log: unknown[]) => {
    const _id = ++next;
    await docs.insertOne({ _id, log });
    return _id;
  };
  const logOf = async (_id: number) => (await docs.findOne({ _id }))?.log;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_arrays');
    docs = db.db.collection<Doc>('docs');
  });
  afterAll(() => db?.drop());

  test('$push with $each and a negative $slice keeps the last n elements', async () => {
    const _id = await insert([1, 2, 3]);
    await docs.updateOne({ _id }, { $push: { log: { $each: [4, 5], $slice: -3 } } });
    expect(await logOf(_id)).toEqual([3, 4, 5]);
  });

  test('$push with $each and a positive $slice keeps the first n elements', async () => {
    const _id = await insert([1, 2]);
    await docs.updateOne({ _id }, { $push: { log: { $each: [3, 4], $slice: 3 } } });
    expect(await logOf(_id)).toEqual([1, 2, 3]);
  });

  test('$push with $slice larger than the array keeps it whole, and $slice: 0 empties it', async () => {
    const whole = await insert([1]);
    await docs.updateOne({ _id: whole }, { $push: { log: { $each: [2], $slice: -10 } } });
    expect(await logOf(whole)).toEqual([1, 2]);
    const emptied = await insert([1]);
    await docs.updateOne({ _id: emptied }, { $push: { log: { $each: [2], $slice: 0 } } });
    expect(await logOf(emptied)).toEqual([]);
  });

  test('$pullAll removes exactly the embedded documents given and keeps the others', async () => {
    const a = { eventId: 'a', payload: { n: 1 } };
    const b = { eventId: 'b', payload: { n: 2 } };
    const c = { eventId: 'c', payload: { n: 3 } };
    const _id = await insert([a, b]);
    // c is pushed after a and b were read, before they are pulled.
    await docs.updateOne({ _id }, { $push: { log: c } });
    await docs.updateOne({ _id }, { $pullAll: { log: [a, b] } });
    expect(await logOf(_id)).toEqual([c]);
  });

  test('an equality filter on a whole array of embedded documents matches exactly that array', async () => {
    const a = { eventId: 'a', payload: { n: 1 } };
    const b = { eventId: 'b', payload: { n: 2 } };
    const _id = await insert([a, b]);
    expect(await docs.countDocuments({ _id, log: [a, b] })).toBe(1);
    expect(await docs.countDocuments({ _id, log: [a] })).toBe(0);
    expect(await docs.countDocuments({ _id, log: [b, a] })).toBe(0);
    await docs.updateOne({ _id }, { $push: { log: { eventId: 'c', payload: { n: 3 } } } });
    const emptied = await docs.updateOne({ _id, log: [a, b] }, { $set: { log: [] } });
    expect(emptied.matchedCount).toBe(0);
    expect(await logOf(_id)).toHaveLength(3);
  });
});
