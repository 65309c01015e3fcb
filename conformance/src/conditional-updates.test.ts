import { mongo } from 'mongoose';
import { describeError, openTestDatabase, type TestDatabase } from './support/database';
import { race, raceAlternately, Violations, type ContenderWrite } from './support/race';

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

  /** A conditional write raced for one document, and how its answer tells a winner. */
  interface Contest<R> {
    /** The race's collection is `<collection>_<contenders>`. */
    collection: string;
    write: ContenderWrite<Doc, R>;
    /** Whether contender i won, from its answer; `wrong` reports what is wrong with the answer. */
    won: (answer: R, status: string, wrong: (what: string) => void) => boolean;
    /** How a winner answers, for the report: "got the document back". */
    winnersDo: string;
  }

  /**
   * Each round, `contenders` connections `write` `{_id, status: BUILDING}` and `{$set: {status:
   * <their own>}}` (`READY_<i>`) for the same fresh document in the same tick. Exactly one must
   * win a round, and the stored status must be its own.
   */
  async function raceToOneWinner<R>(
    contenders: number,
    { collection, write, won, winnersDo }: Contest<R>,
  ) {
    const name = `${collection}_${contenders}`;
    const { ids, collections } = await setUp(name, contenders);
    const violations = new Violations();
    const winners = new Map<string, string>();

    for (const [round, _id] of ids.entries()) {
      const values = collections.map((_, i) => `READY_${i}`);
      const results = await race(
        collections.map(
          (c, i) => () => write(c, { _id, status: 'BUILDING' }, { $set: { status: values[i]! } }),
        ),
      );
      const winning: number[] = [];
      results.forEach((r, i) => {
        if (r.status === 'rejected') {
          violations.add(round, `contender ${i} failed: ${describeError(r.reason)}`);
          return;
        }
        const wrong = (what: string) => violations.add(round, `contender ${i} ${what}`);
        if (won(r.value, values[i]!, wrong)) winning.push(i);
      });
      if (winning.length === 1) winners.set(_id.toHexString(), values[winning[0]!]!);
      else violations.add(round, `${winning.length} contenders ${winnersDo} [${winning}]`);
    }

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
    expect(violations.report()).toEqual(violations.none);
  }

  /**
   * Each round races `deleteOne(deleteFilter)` against updateOne({_id, status: BUILDING}) to
   * READY on a fresh document, each fired first in turn; `check` reports what is wrong with
   * their answers and the document left behind.
   */
  async function raceDeleteWithUpdate(
    name: string,
    deleteFilter: (_id: mongo.ObjectId) => mongo.Filter<Doc>,
    check: (
      seen: { deletedCount: number; modifiedCount: number; left: Doc | null },
      wrong: (what: string) => void,
    ) => void,
  ) {
    const { ids, collections } = await setUp(name, 2);
    const [deleter, updater] = collections as [mongo.Collection<Doc>, mongo.Collection<Doc>];
    const violations = new Violations();

    for (const [round, _id] of ids.entries()) {
      const [deleted, updated] = await raceAlternately(
        round,
        () => deleter.deleteOne(deleteFilter(_id)),
        () => updater.updateOne({ _id, status: 'BUILDING' }, { $set: { status: 'READY' } }),
      );
      if (deleted.status === 'rejected') {
        violations.add(round, `deleteOne failed: ${describeError(deleted.reason)}`);
      }
      if (updated.status === 'rejected') {
        violations.add(round, `updateOne failed: ${describeError(updated.reason)}`);
      }
      if (deleted.status === 'rejected' || updated.status === 'rejected') continue;
      const seen = {
        deletedCount: deleted.value.deletedCount,
        modifiedCount: updated.value.modifiedCount,
        left: await db.db.collection<Doc>(name).findOne({ _id }),
      };
      check(seen, (what) => violations.add(round, what));
    }
    expect(violations.report()).toEqual(violations.none);
  }

  /** A row of the table below, its result type fixed by its own write. */
  const contest = <R>(c: Contest<R> & { call: string; outcome: string }) => ({
    call: c.call,
    outcome: c.outcome,
    run: (contenders: number) => raceToOneWinner(contenders, c),
  });

  const contests = [
    contest({
      call: 'findOneAndUpdate({_id, status: BUILDING}, {$set: own status}, {new: true})',
      outcome: 'exactly one gets the document back, with its own status, and that status is stored',
      collection: 'find_one_and_update',
      write: (c, filter, update) => c.findOneAndUpdate(filter, update, { returnDocument: 'after' }),
      won: (doc, status, wrong) => {
        if (doc === null) return false;
        if (doc.status !== status) wrong(`got back status ${doc.status}, not its own`);
        return true;
      },
      winnersDo: 'got the document back',
    }),
    contest({
      call: 'updateOne({_id, status: BUILDING}, {$set: own status})',
      outcome: 'exactly one reports modifiedCount 1, and its status is stored',
      collection: 'update_one',
      write: (c, filter, update) => c.updateOne(filter, update),
      won: ({ modifiedCount }, _status, wrong) => {
        if (modifiedCount !== 0 && modifiedCount !== 1) {
          wrong(`reports modifiedCount ${modifiedCount}`);
        }
        return modifiedCount === 1;
      },
      winnersDo: 'report modifiedCount 1',
    }),
  ];

  test.each(
    contests.flatMap((contest) => [2, 8].map((contenders) => ({ ...contest, contenders }))),
  )(
    'of $contenders concurrent $call, $outcome',
    ({ run, contenders }) => run(contenders),
    TIMEOUT_MS,
  );

  test(
    'a deleteOne({_id}) racing updateOne({_id, status: BUILDING}) always deletes, and no updated document is left behind the reported delete',
    () =>
      raceDeleteWithUpdate(
        'delete_races_update',
        (_id) => ({ _id }),
        ({ deletedCount, modifiedCount, left }, wrong) => {
          if (deletedCount !== 1) {
            wrong(
              `deleteOne({_id}) of an existing document reports deletedCount ${deletedCount} (updateOne modifiedCount ${modifiedCount})`,
            );
          }
          if (left !== null) {
            wrong(
              `the document is there with status ${left.status} after deleteOne reported deletedCount ${deletedCount} (updateOne modifiedCount ${modifiedCount})`,
            );
          }
        },
      ),
    TIMEOUT_MS,
  );

  test(
    'a deleteOne({_id, status: BUILDING}) racing updateOne({_id, status: BUILDING}): exactly one of them wins, and the document is gone or holds the update accordingly',
    () =>
      raceDeleteWithUpdate(
        'conditional_delete_races_update',
        (_id) => ({ _id, status: 'BUILDING' }),
        ({ deletedCount, modifiedCount, left }, wrong) => {
          const deleteWon = deletedCount === 1 && modifiedCount === 0 && left === null;
          const updateWon = deletedCount === 0 && modifiedCount === 1 && left?.status === 'READY';
          if (!deleteWon && !updateWon) {
            wrong(
              `deleteOne deletedCount ${deletedCount}, updateOne modifiedCount ${modifiedCount}, and the document is ${left ? `there with status ${left.status}` : 'gone'}`,
            );
          }
        },
      ),
    TIMEOUT_MS,
  );
});
