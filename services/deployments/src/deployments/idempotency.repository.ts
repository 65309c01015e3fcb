import type { Model } from 'mongoose';
import { insertOnce } from '@platform/shared';
import type { IdempotencyKeyDoc } from './idempotency.model';

/** How long a key is remembered (contracts.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export type IdempotencyRecord = Omit<IdempotencyKeyDoc, '_id'> & { id: string };

const toRecord = (doc: IdempotencyKeyDoc): IdempotencyRecord => ({
  id: doc._id,
  requestHash: doc.requestHash,
  deploymentId: doc.deploymentId,
  createdAt: doc.createdAt,
  response: doc.response,
});

export class IdempotencyRepository {
  constructor(private readonly model: Model<IdempotencyKeyDoc>) {}

  /**
   * Returns the key's live record: `fresh` when the key is new (or its previous use expired),
   * else the one stored first. Concurrent first uses agree on one record: the insert is on the
   * unique _id. Bounded: each pass either inserts, finds a live record, or removes an expired
   * one that nobody renewed.
   */
  async claim(
    accountId: string,
    key: string,
    fresh: Omit<IdempotencyRecord, 'id'>,
  ): Promise<IdempotencyRecord> {
    const id = `${accountId}:${key}`;
    for (let pass = 0; pass < 3; pass++) {
      if (await insertOnce(this.model.create({ _id: id, ...fresh }))) return { id, ...fresh };
      const existing = await this.model.findById(id).lean<IdempotencyKeyDoc>();
      if (!existing) continue;
      if (fresh.createdAt.getTime() - existing.createdAt.getTime() < IDEMPOTENCY_WINDOW_MS)
        return toRecord(existing);
      await this.model.deleteOne({ _id: id, createdAt: existing.createdAt });
    }
    throw new Error(`could not claim idempotency key ${id}`);
  }

  async pruneExpired(now = new Date()): Promise<number> {
    const result = await this.model.deleteMany({
      createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) },
    });
    return result.deletedCount;
  }
}
