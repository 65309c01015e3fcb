import { mongo } from 'mongoose';
import { describeError, errorCode, openTestDatabase, type TestDatabase } from './support/database';
import { race, Violations } from './support/race';

/**
 * Upserts racing on a key under a unique index (an account's first login, a queue entry) leave
 * exactly one document per key. MongoDB may answer a losing contender with a duplicate-key error
 * (E11000, code 11000) instead of retrying it as an update; the product retries those. Any other
 * error, or a second document, breaks the guarantee.
 */
const ROUNDS = 20;
const CONTENDERS = 8;
const TIMEOUT_MS = 60_000;

type Keyed = { _id: mongo.ObjectId; key: string; createdBy: number; createdAt: Date };

describe('Concurrent upserts on a key under a unique index', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_upserts');
  });
  afterAll(() => db?.drop());

  async function setUp(name: string) {
    await db.db.collection(name).createIndex({ key: 1 }, { unique: true });
    return (await db.collections(name, CONTENDERS)).map((c) => c.db.collection<Keyed>(name));
  }

  /** One document per key, the one every contender that succeeded saw (when it says which). */
  async function checkStored(
    name: string,
    round: number,
    key: string,
    seen: Set<string>,
    violations: Violations,
  ) {
    const stored = await db.db.collection<Keyed>(name).find({ key }).toArray();
    if (stored.length !== 1) {
      violations.add(round, `${stored.length} documents with key ${key}`);
      return;
    }
    const id = stored[0]!._id.toHexString();
    const others = [...seen].filter((s) => s !== id);
    if (others.length > 0) {
      violations.add(round, `contenders saw documents [${others}] besides the stored ${id}`);
    }
  }

  test(
    `of ${CONTENDERS} concurrent findOneAndUpdate({key}, {$setOnInsert}, {upsert: true, new: true}) per key, ${ROUNDS} keys: one document per key, exactly one contender inserted it, every other one got it back or failed with code 11000`,
    async () => {
      const name = 'find_one_and_update_upserts';
      const collections = await setUp(name);
      const violations = new Violations();

      for (let round = 0; round < ROUNDS; round++) {
        const key = `key-${round}`;
        const results = await race(
          collections.map(
            (c, i) => () =>
              c.findOneAndUpdate(
                { key },
                { $setOnInsert: { createdBy: i, createdAt: new Date() } },
                { upsert: true, returnDocument: 'after', includeResultMetadata: true },
              ),
          ),
        );
        const seen = new Set<string>();
        let inserted = 0;
        results.forEach((r, i) => {
          if (r.status === 'rejected') {
            if (errorCode(r.reason) !== 11000) {
              violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
            }
            return;
          }
          const doc = r.value.value;
          if (!doc || doc.key !== key) {
            violations.add(round, `contender ${i} got back ${JSON.stringify(doc)}`);
            return;
          }
          seen.add(doc._id.toHexString());
          if (r.value.lastErrorObject?.updatedExisting === false) inserted++;
        });
        if (inserted !== 1) violations.add(round, `${inserted} contenders report an insert`);
        await checkStored(name, round, key, seen, violations);
      }
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );

  test(
    `of ${CONTENDERS} concurrent updateOne({key}, {$setOnInsert}, {upsert: true}) per key, ${ROUNDS} keys: one document per key, exactly one contender reports upsertedCount 1, every other one matched it or failed with code 11000`,
    async () => {
      const name = 'update_one_upserts';
      const collections = await setUp(name);
      const violations = new Violations();

      for (let round = 0; round < ROUNDS; round++) {
        const key = `key-${round}`;
        const results = await race(
          collections.map(
            (c, i) => () =>
              c.updateOne(
                { key },
                { $setOnInsert: { createdBy: i, createdAt: new Date() } },
                { upsert: true },
              ),
          ),
        );
        const seen = new Set<string>();
        let inserted = 0;
        results.forEach((r, i) => {
          if (r.status === 'rejected') {
            if (errorCode(r.reason) !== 11000) {
              violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
            }
            return;
          }
          const { upsertedCount, upsertedId, matchedCount } = r.value;
          if (upsertedCount === 1) {
            inserted++;
            if (upsertedId) seen.add(upsertedId.toHexString());
          } else if (matchedCount !== 1) {
            violations.add(
              round,
              `contender ${i} neither inserted nor matched: ${JSON.stringify(r.value)}`,
            );
          }
        });
        if (inserted !== 1) violations.add(round, `${inserted} contenders report upsertedCount 1`);
        await checkStored(name, round, key, seen, violations);
      }
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );
});
