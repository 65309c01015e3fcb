import type { Model, Types } from 'mongoose';
import { isDuplicateKeyError, parseObjectId } from '@platform/shared';
import type { AccountDocument } from './accounts.model';

export interface Account {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
}

export interface AccountProfile {
  sub: string;
  email: string;
  name: string;
}

const toAccount = (doc: AccountDocument & { _id: Types.ObjectId }): Account => ({
  id: doc._id.toHexString(),
  email: doc.email,
  name: doc.name,
  createdAt: doc.createdAt,
});

export class AccountsRepository {
  constructor(private readonly accounts: Model<AccountDocument>) {}

  /**
   * One atomic upsert by `sub`: created at the first login, e-mail and name refreshed at each
   * one, `createdAt` written once.
   */
  async upsertBySubject(profile: AccountProfile, now = new Date()): Promise<Account> {
    const upsert = () =>
      this.accounts
        .findOneAndUpdate(
          { sub: profile.sub },
          {
            $set: { email: profile.email, name: profile.name, lastLoginAt: now },
            $setOnInsert: { createdAt: now },
          },
          { upsert: true, new: true },
        )
        .lean()
        .orFail();
    try {
      return toAccount(await upsert());
    } catch (err) {
      // Racing first logins of one subject both try to insert; the unique index lets one in.
      // MongoDB retries such an upsert itself, and documents that a client may retry it: the
      // retry finds the winner's account and updates it.
      if (!isDuplicateKeyError(err)) throw err;
      return toAccount(await upsert());
    }
  }

  async findById(id: string): Promise<Account | null> {
    let _id: Types.ObjectId;
    try {
      _id = parseObjectId(id);
    } catch {
      return null;
    }
    const doc = await this.accounts.findById(_id).lean();
    return doc ? toAccount(doc) : null;
  }
}
