import { Types, type Model } from 'mongoose';
import { isDuplicateKeyError } from '@platform/shared';
import type { IdempotencyKeyDoc } from './deployments.model';

/** How long a key is remembered (contracts.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyRecord {
  id: string;
  requestHash: string;
  deploymentId: Types.ObjectId;
  createdAt: Date;
  response: { status: number; body: unknown } | null;
}

const toRecord = (doc: IdempotencyKeyDoc): IdempotencyRecord => ({
  id: doc._id,
  requestHash: doc.requestHash,
  deploymentId: doc.deploymentId,
  createdAt: doc.createdAt,
  response: doc.response ?? null,
});

export class IdempotencyRepository {
  constructor(private readonly model: Model<IdempotencyKeyDoc>) {}

  /**
   * Returns the key's live record, creating it (with a new deployment id) when the key is new
   * or its previous use has expired. Concurrent first uses agree on one record: the insert is
   * on the unique _id.
   */
  async claim(
    accountId: string,
    key: string,
    requestHash: string,
    now = new Date(),
  ): Promise<IdempotencyRecord> {
    const id = `${accountId}:${key}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      const fresh: IdempotencyKeyDoc = {
        _id: id,
        requestHash,
        deploymentId: new Types.ObjectId(),
        createdAt: now,
        response: null,
      };
      try {
        await this.model.create(fresh);
        return toRecord(fresh);
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const existing = await this.model.findById(id).lean<IdempotencyKeyDoc>();
      if (!existing) continue;
      if (now.getTime() - existing.createdAt.getTime() < IDEMPOTENCY_WINDOW_MS)
        return toRecord(existing);
      // No TTL index on FerretDB: an expired key is removed here, only if nobody renewed it.
      await this.model.deleteOne({ _id: id, createdAt: existing.createdAt });
    }
    throw new Error(`could not claim idempotency key ${id}`);
  }

  async saveResponse(id: string, response: { status: number; body: unknown }): Promise<void> {
    await this.model.updateOne({ _id: id, response: null }, { $set: { response } });
  }

  async pruneExpired(now = new Date()): Promise<number> {
    const result = await this.model.deleteMany({
      createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) },
    });
    return result.deletedCount;
  }
}
