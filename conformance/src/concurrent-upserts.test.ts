import { mongo } from 'mongoose';
import { describeError, errorCode, openTestDatabase, type TestDatabase } from './support/database';
import { race, Violations, type ContenderWrite } from './support/race';

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

/** What a contender's answer tells besides whether it inserted. */
interface Report {
  saw(id: string): void;
  wrong(what: string): void;
}

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

  /**
   * ROUNDS keys, each upserted by CONTENDERS connections in the same tick, with `upsert` sending
   * `{key}` and `{$setOnInsert: {createdBy: <contender>, createdAt}}`. A contender may fail
   * with code 11000 and nothing else; `inserted` reads from its answer whether it inserted, and
   * reports the document it saw and anything wrong with the answer. Exactly one must insert
   * (`insertersDo` says how an inserter answers, for the report), and one document be stored.
   */
  async function raceUpserts<R>(
    name: string,
    upsert: ContenderWrite<Keyed, R>,
    inserted: (answer: R, key: string, report: Report) => boolean,
    insertersDo: string,
  ) {
    const collections = await setUp(name);
    const violations = new Violations();

    for (let round = 0; round < ROUNDS; round++) {
      const key = `key-${round}`;
      const results = await race(
        collections.map(
          (c, i) => () =>
            upsert(c, { key }, { $setOnInsert: { createdBy: i, createdAt: new Date() } }),
        ),
      );
      const seen = new Set<string>();
      let inserters = 0;
      results.forEach((r, i) => {
        if (r.status === 'rejected') {
          if (errorCode(r.reason) !== 11000) {
            violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
          }
          return;
        }
        const report: Report = {
          saw: (id) => seen.add(id),
          wrong: (what) => violations.add(round, `contender ${i} ${what}`),
        };
        if (inserted(r.value, key, report)) inserters++;
      });
      if (inserters !== 1) violations.add(round, `${inserters} contenders ${insertersDo}`);
      await checkStored(name, round, key, seen, violations);
    }
    expect(violations.report()).toEqual(violations.none);
  }

  test(
    `of ${CONTENDERS} concurrent findOneAndUpdate({key}, {$setOnInsert}, {upsert: true, new: true}) per key, ${ROUNDS} keys: one document per key, exactly one contender inserted it, every other one got it back or failed with code 11000`,
    () =>
      raceUpserts(
        'find_one_and_update_upserts',
        (c, filter, update) =>
          c.findOneAndUpdate(filter, update, {
            upsert: true,
            returnDocument: 'after',
            includeResultMetadata: true,
          }),
        (answer, key, { saw, wrong }) => {
          const doc = answer.value;
          if (!doc || doc.key !== key) {
            wrong(`got back ${JSON.stringify(doc)}`);
            return false;
          }
          saw(doc._id.toHexString());
          return answer.lastErrorObject?.updatedExisting === false;
        },
        'report an insert',
      ),
    TIMEOUT_MS,
  );

  test(
    `of ${CONTENDERS} concurrent updateOne({key}, {$setOnInsert}, {upsert: true}) per key, ${ROUNDS} keys: one document per key, exactly one contender reports upsertedCount 1, every other one matched it or failed with code 11000`,
    () =>
      raceUpserts(
        'update_one_upserts',
        (c, filter, update) => c.updateOne(filter, update, { upsert: true }),
        (answer, _key, { saw, wrong }) => {
          if (answer.upsertedCount === 1) {
            if (answer.upsertedId) saw(answer.upsertedId.toHexString());
            return true;
          }
          if (answer.matchedCount !== 1) {
            wrong(`neither inserted nor matched: ${JSON.stringify(answer)}`);
          }
          return false;
        },
        'report upsertedCount 1',
      ),
    TIMEOUT_MS,
  );
});
