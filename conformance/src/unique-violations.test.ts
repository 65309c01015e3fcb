import { Schema, type Model } from 'mongoose';
import { syncIndexes } from '@platform/shared';
import { describeError, errorCode, openTestDatabase, type TestDatabase } from './support/database';

/**
 * A write that would make two documents share a unique key is refused with code 11000, whatever
 * the write: an insert, an update ($set), a findOneAndUpdate, a replace, an upsert that inserts.
 * The product maps 11000 to 409 "name taken"; a write that went through instead, or failed with
 * another error, breaks that. The refused write changes nothing.
 */
interface Account {
  email: string;
  handle: string;
}

interface Project {
  accountId: string;
  nameKey: string;
}

const accountSchema = new Schema<Account>({
  email: { type: String, required: true },
  handle: { type: String, required: true },
});
accountSchema.index({ email: 1 }, { unique: true });

const projectSchema = new Schema<Project>({
  accountId: { type: String, required: true },
  nameKey: { type: String, required: true },
});
projectSchema.index({ accountId: 1, nameKey: 1 }, { unique: true });

const takeAdasEmail = { $set: { email: 'ada@example.com' } };

/** 11000 when the write fails with it; otherwise what happened instead, for the failure message. */
async function codeOf(write: Promise<unknown>): Promise<unknown> {
  try {
    const result = await write;
    return `no error: ${JSON.stringify(result)}`;
  } catch (err) {
    return errorCode(err) === 11000 ? 11000 : describeError(err);
  }
}

describe('A write that breaks a unique index', () => {
  let db: TestDatabase;
  let Accounts: Model<Account>;
  let Projects: Model<Project>;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_unique');
    Accounts = db.connection.model<Account>('Account', accountSchema);
    Projects = db.connection.model<Project>('Project', projectSchema);
    await syncIndexes([Accounts, Projects]);
  });
  afterAll(() => db?.drop());

  beforeEach(async () => {
    await Accounts.deleteMany({});
    await Projects.deleteMany({});
    await Accounts.create([
      { email: 'ada@example.com', handle: 'ada' },
      { email: 'bob@example.com', handle: 'bob' },
    ]);
  });

  /** Bob's document as it was, and no document for anyone else: the refused write changed nothing. */
  async function expectUnchanged() {
    const stored = await Accounts.find({}, { _id: 0, email: 1, handle: 1 })
      .sort({ handle: 1 })
      .lean();
    expect(stored).toEqual([
      { email: 'ada@example.com', handle: 'ada' },
      { email: 'bob@example.com', handle: 'bob' },
    ]);
  }

  // Each write would give Bob's document Ada's e-mail, or add one with a taken e-mail.
  test.each([
    {
      name: 'an insert of a duplicate key fails with code 11000',
      writes: [
        () => Accounts.create({ email: 'ada@example.com', handle: 'eve' }),
        () => Accounts.collection.insertOne({ email: 'bob@example.com', handle: 'eve' }),
      ],
    },
    {
      name: 'updateOne with $set to a taken key fails with code 11000 and changes nothing',
      writes: [() => Accounts.updateOne({ handle: 'bob' }, takeAdasEmail)],
    },
    {
      name: 'findOneAndUpdate with $set to a taken key fails with code 11000 and changes nothing',
      writes: [() => Accounts.findOneAndUpdate({ handle: 'bob' }, takeAdasEmail, { new: true })],
    },
    {
      name: 'replaceOne with a taken key fails with code 11000 and changes nothing',
      writes: [
        () => Accounts.replaceOne({ handle: 'bob' }, { email: 'ada@example.com', handle: 'bob' }),
      ],
    },
    {
      name: 'an upsert that inserts a taken key fails with code 11000 and inserts nothing',
      writes: [
        () => Accounts.updateOne({ handle: 'eve' }, takeAdasEmail, { upsert: true }),
        () =>
          Accounts.findOneAndUpdate(
            { handle: 'eve' },
            { $set: { email: 'bob@example.com' } },
            { upsert: true, new: true },
          ),
      ],
    },
  ])('$name', async ({ writes }) => {
    for (const write of writes) expect(await codeOf(write())).toBe(11000);
    await expectUnchanged();
  });

  test('a compound unique index {accountId, nameKey} allows the same nameKey under another accountId, and refuses it twice under one with code 11000', async () => {
    await Projects.create({ accountId: 'acc-1', nameKey: 'web' });
    await expect(Projects.create({ accountId: 'acc-2', nameKey: 'web' })).resolves.toBeDefined();
    await Projects.create({ accountId: 'acc-2', nameKey: 'api' });

    expect(await codeOf(Projects.create({ accountId: 'acc-1', nameKey: 'web' }))).toBe(11000);
    // A rename onto a name its account already has is refused; onto one only another has, not.
    expect(
      await codeOf(
        Projects.updateOne({ accountId: 'acc-2', nameKey: 'api' }, { $set: { nameKey: 'web' } }),
      ),
    ).toBe(11000);
    const renamed = await Projects.updateOne(
      { accountId: 'acc-1', nameKey: 'web' },
      { $set: { nameKey: 'api' } },
    );
    expect(renamed.modifiedCount).toBe(1);

    const stored = await Projects.find({}, { _id: 0, accountId: 1, nameKey: 1 })
      .sort({ accountId: 1, nameKey: 1 })
      .lean();
    expect(stored).toEqual([
      { accountId: 'acc-1', nameKey: 'api' },
      { accountId: 'acc-2', nameKey: 'api' },
      { accountId: 'acc-2', nameKey: 'web' },
    ]);
  });
});
