import { mongo } from 'mongoose';
import { describeError, openTestDatabase, type TestDatabase } from './support/database';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Optimistic concurrency: read a version, write only if it is still that version, retry when the
 * write modified nothing. With many writers, every write reported as done must have happened on
 * top of the previous one: no increment may be lost.
 */
const WRITERS = 50;
const INCREMENTS_EACH = 20; // 50 × 20 = 1,000 increments in total
const CONNECTIONS = 10;
const MAX_ATTEMPTS_EACH = 5_000;
// The work is bounded by counts (writers × attempts), never by time: a loaded machine only makes
// it slower. The timeout is jest's guard against a hang, far beyond any run seen.
const HANG_GUARD_MS = 15 * 60_000;

type Counter = { _id: string; v: number };

describe('An optimistic counter', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_counter');
  });
  afterAll(() => db?.drop());

  test(
    `ends at exactly ${WRITERS * INCREMENTS_EACH} after ${WRITERS} writers made ${WRITERS * INCREMENTS_EACH} successful read-then-updateOne({_id, v: read}, {$set: {v: read + 1}}) increments, retrying when nothing was modified`,
    async () => {
      await db.db.collection<Counter>('counters').insertOne({ _id: 'c', v: 0 });
      const collections = (await db.collections('counters', CONNECTIONS)).map((c) =>
        c.db.collection<Counter>('counters'),
      );
      const errors: string[] = [];

      const writer = async (counters: mongo.Collection<Counter>) => {
        let done = 0;
        let losses = 0;
        for (let tries = 0; done < INCREMENTS_EACH && tries < MAX_ATTEMPTS_EACH; tries++) {
          // A loser backs off a little, at random, as a real client would: the writers still
          // overlap all the time, without each success costing a retry of all 49 others.
          if (losses > 0) await sleep(Math.random() * Math.min(losses, 8) * 2);
          if (errors.length > 0) break;
          try {
            const read = await counters.findOne({ _id: 'c' });
            if (!read) throw new Error('the counter is gone');
            const result = await counters.updateOne(
              { _id: 'c', v: read.v },
              { $set: { v: read.v + 1 } },
            );
            if (result.modifiedCount === 1) {
              done++;
              losses = 0;
            } else {
              losses++;
            }
          } catch (err) {
            errors.push(describeError(err));
          }
        }
        return done;
      };

      const done = await Promise.all(
        Array.from({ length: WRITERS }, (_, w) => writer(collections[w % CONNECTIONS]!)),
      );
      const increments = done.reduce((a, b) => a + b, 0);
      const final = (await db.db.collection<Counter>('counters').findOne({ _id: 'c' }))?.v;

      expect({
        errors: errors.slice(0, 5),
        incrementsReported: increments,
        final,
      }).toEqual({
        errors: [],
        incrementsReported: WRITERS * INCREMENTS_EACH,
        final: WRITERS * INCREMENTS_EACH,
      });
    },
    HANG_GUARD_MS,
  );
});
