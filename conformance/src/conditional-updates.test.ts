import { mongo } from 'mongoose';
import { describeError, openTestDatabase, type TestDatabase } from './support/database';
import { race, raceAlternately, Violations } from './support/race';

/**
 * A conditional write on one document is atomic: of contenders that all find it `BUILDING` and
 * set their own status, exactly one changes it, and what is stored is that one's value. The
 * product moves deployments, leases and deliveries through states this way.
 *
 * Each round is a fresh document; each contender sends its command on its own connection, all in
 * the same tick, so the commands are in flight on the server together.
 */
const ROUNDS = 200;
const TIMEOUT_MS = 90_000;

type Doc = { _id: mongo.ObjectId; status: string };

describe('Conditional updates of one document race to exactly one winner', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_races');
  });
  afterAll(() => db?.drop());

  /** ROUNDS fresh `BUILDING` documents in a new collection, and that collection through `count` connections. */
  async function setUp(name: string, count: number) {
    const ids = Array.from({ length: ROUNDS }, () => new mongo.ObjectId());
    await db.db.collection<Doc>(name).insertMany(ids.map((_id) => ({ _id, status: 'BUILDING' })));
    const collections = (await db.collections(name, count)).map((c) =>
      c.db.collection<Doc>(c.collectionName),
    );
    return { ids, collections };
  }

  /** After the rounds: each document holds the winner's status (or a violation is recorded). */
  async function checkStored(
    name: string,
    ids: mongo.ObjectId[],
    winners: Map<string, string>,
    violations: Violations,
  ) {
    const stored = new Map(
      (await db.db.collection<Doc>(name).find({}).toArray()).map((d) => [
        d._id.toHexString(),
        d.status,
      ]),
    );
    ids.forEach((id, round) => {
      const winner = winners.get(id.toHexString());
      const status = stored.get(id.toHexString());
      if (winner !== undefined && status !== winner) {
        violations.add(round, `stored status is ${String(status)}, the winner set ${winner}`);
      }
    });
  }

  test.each([2, 8])(
    'of %i concurrent findOneAndUpdate({_id, status: BUILDING}, {$set: own status}, {new: true}), exactly one gets the document back, with its own status, and that status is stored',
    async (contenders) => {
      const name = `find_one_and_update_${contenders}`;
      const { ids, collections } = await setUp(name, contenders);
      const violations = new Violations();
      const winners = new Map<string, string>();

      for (const [round, _id] of ids.entries()) {
        const values = collections.map((_, i) => `READY_${i}`);
        const results = await race(
          collections.map(
            (c, i) => () =>
              c.findOneAndUpdate(
                { _id, status: 'BUILDING' },
                { $set: { status: values[i]! } },
                { returnDocument: 'after' },
              ),
          ),
        );
        const won: number[] = [];
        results.forEach((r, i) => {
          if (r.status === 'rejected') {
            violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
          } else if (r.value !== null) {
            won.push(i);
            if (r.value.status !== values[i]) {
              violations.add(
                round,
                `contender ${i} got back status ${r.value.status}, not its own`,
              );
            }
          }
        });
        if (won.length === 1) winners.set(_id.toHexString(), values[won[0]!]!);
        else violations.add(round, `${won.length} contenders got the document back [${won}]`);
      }
      await checkStored(name, ids, winners, violations);
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );

  test.each([2, 8])(
    'of %i concurrent updateOne({_id, status: BUILDING}, {$set: own status}), exactly one reports modifiedCount 1, and its status is stored',
    async (contenders) => {
      const name = `update_one_${contenders}`;
      const { ids, collections } = await setUp(name, contenders);
      const violations = new Violations();
      const winners = new Map<string, string>();

      for (const [round, _id] of ids.entries()) {
        const values = collections.map((_, i) => `READY_${i}`);
        const results = await race(
          collections.map(
            (c, i) => () =>
              c.updateOne({ _id, status: 'BUILDING' }, { $set: { status: values[i]! } }),
          ),
        );
        const won: number[] = [];
        results.forEach((r, i) => {
          if (r.status === 'rejected') {
            violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
          } else if (r.value.modifiedCount === 1) {
            won.push(i);
          } else if (r.value.modifiedCount !== 0) {
            violations.add(round, `contender ${i} reports modifiedCount ${r.value.modifiedCount}`);
          }
        });
        if (won.length === 1) winners.set(_id.toHexString(), values[won[0]!]!);
        else violations.add(round, `${won.length} contenders report modifiedCount 1 [${won}]`);
      }
      await checkStored(name, ids, winners, violations);
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );

  test(
    'a deleteOne({_id}) racing updateOne({_id, status: BUILDING}) always deletes, and no updated document is left behind the reported delete',
    async () => {
      const name = 'delete_races_update';
      const { ids, collections } = await setUp(name, 2);
      const [deleter, updater] = collections as [mongo.Collection<Doc>, mongo.Collection<Doc>];
      const violations = new Violations();

      for (const [round, _id] of ids.entries()) {
        const [deleted, updated] = await raceAlternately(
          round,
          () => deleter.deleteOne({ _id }),
          () => updater.updateOne({ _id, status: 'BUILDING' }, { $set: { status: 'READY' } }),
        );
        if (deleted.status === 'rejected') {
          violations.add(round, `deleteOne failed: ${describeError(deleted.reason)}`);
        }
        if (updated.status === 'rejected') {
          violations.add(round, `updateOne failed: ${describeError(updated.reason)}`);
        }
        if (deleted.status === 'rejected' || updated.status === 'rejected') continue;
        const { deletedCount } = deleted.value;
        const { modifiedCount } = updated.value;
        const left = await db.db.collection<Doc>(name).findOne({ _id });
        if (deletedCount !== 1) {
          violations.add(
            round,
            `deleteOne({_id}) of an existing document reports deletedCount ${deletedCount} (updateOne modifiedCount ${modifiedCount})`,
          );
        }
        if (left !== null) {
          violations.add(
            round,
            `the document is there with status ${left.status} after deleteOne reported deletedCount ${deletedCount} (updateOne modifiedCount ${modifiedCount})`,
          );
        }
      }
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );

  test(
    'a deleteOne({_id, status: BUILDING}) racing updateOne({_id, status: BUILDING}): exactly one of them wins, and the document is gone or holds the update accordingly',
    async () => {
      const name = 'conditional_delete_races_update';
      const { ids, collections } = await setUp(name, 2);
      const [deleter, updater] = collections as [mongo.Collection<Doc>, mongo.Collection<Doc>];
      const violations = new Violations();

      for (const [round, _id] of ids.entries()) {
        const [deleted, updated] = await raceAlternately(
          round,
          () => deleter.deleteOne({ _id, status: 'BUILDING' }),
          () => updater.updateOne({ _id, status: 'BUILDING' }, { $set: { status: 'READY' } }),
        );
        if (deleted.status === 'rejected') {
          violations.add(round, `deleteOne failed: ${describeError(deleted.reason)}`);
        }
        if (updated.status === 'rejected') {
          violations.add(round, `updateOne failed: ${describeError(updated.reason)}`);
        }
        if (deleted.status === 'rejected' || updated.status === 'rejected') continue;
        const { deletedCount } = deleted.value;
        const { modifiedCount } = updated.value;
        const left = await db.db.collection<Doc>(name).findOne({ _id });
        const deleteWon = deletedCount === 1 && modifiedCount === 0 && left === null;
        const updateWon = deletedCount === 0 && modifiedCount === 1 && left?.status === 'READY';
        if (!deleteWon && !updateWon) {
          violations.add(
            round,
            `deleteOne deletedCount ${deletedCount}, updateOne modifiedCount ${modifiedCount}, and the document is ${left ? `there with status ${left.status}` : 'gone'}`,
          );
        }
      }
      expect(violations.report()).toEqual(violations.none);
    },
    TIMEOUT_MS,
  );
});
