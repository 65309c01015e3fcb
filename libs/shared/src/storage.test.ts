import { Schema, Types, type Connection, type Model } from 'mongoose';
import { conflict, AppError } from './errors';
import { newEvent, TOPICS, type ProjectDeletedEvent } from './events';
import { connectMongo, syncIndexes } from './mongo';
import { outboxEntry, outboxFields, type OutboxEntry } from './outbox';
import { insertOnce, rejectDuplicate, transition } from './storage';
import { testInfraUrls, testLogger, uniqueName } from './testing';

interface Job {
  _id: Types.ObjectId;
  owner: string;
  key: string;
  status: 'NEW' | 'RUNNING' | 'DONE';
  doneAt?: Date;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

describe('the shared storage patterns (real MongoDB)', () => {
  let connection: Connection;
  let Job: Model<Job>;

  beforeAll(async () => {
    connection = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: uniqueName('shared_storage'),
      logger: testLogger(),
    });
    const schema = new Schema<Job>({
      _id: { type: Schema.Types.ObjectId, required: true },
      owner: String,
      key: String,
      status: String,
      doneAt: Date,
      ...outboxFields,
    });
    schema.index({ key: 1 }, { unique: true });
    Job = connection.model<Job>('Job', schema);
    await syncIndexes([Job]);
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  const newJob = (status: Job['status'] = 'NEW') =>
    Job.create({ _id: new Types.ObjectId(), owner: 'a', key: uniqueName('k'), status });

  const event = () =>
    outboxEntry(
      TOPICS.projectDeleted,
      'k',
      newEvent<ProjectDeletedEvent>({ type: 'project.deleted', accountId: 'a', projectId: 'p' }),
    );

  it('changes the state from an allowed one, with its fields and its event, in one write', async () => {
    const job = await newJob('RUNNING');
    const doneAt = new Date();
    const entry = event();
    const done = await transition(Job, {
      where: { _id: job._id, owner: 'a' },
      from: ['NEW', 'RUNNING'],
      to: 'DONE',
      set: { doneAt },
      events: [entry],
    });
    expect(done).toMatchObject({ status: 'DONE', doneAt, outboxPending: true });
    expect(done?.outbox).toEqual([entry]);
  });

  it('returns null and writes nothing when the state is not one it may leave, or the owner differs', async () => {
    const job = await newJob('DONE');
    expect(
      await transition(Job, {
        where: { _id: job._id },
        from: ['NEW'],
        to: 'RUNNING',
        events: [event()],
      }),
    ).toBeNull();
    const other = await newJob('NEW');
    expect(
      await transition(Job, {
        where: { _id: other._id, owner: 'b' },
        from: ['NEW'],
        to: 'RUNNING',
      }),
    ).toBeNull();
    expect(await Job.findById(job._id).lean()).toMatchObject({ status: 'DONE', outbox: [] });
    expect(await Job.findById(other._id).lean()).toMatchObject({ status: 'NEW' });
  });

  it('turns a duplicate key, on insert and on update, into the caller’s error', async () => {
    const taken = await newJob();
    const duplicateInsert = Job.create({
      _id: new Types.ObjectId(),
      key: taken.key,
      status: 'NEW',
    });
    await expect(rejectDuplicate(duplicateInsert, () => conflict('taken'))).rejects.toMatchObject({
      status: 409,
      code: 'CONFLICT',
    });
    const other = await newJob();
    const duplicateUpdate = Job.updateOne({ _id: other._id }, { $set: { key: taken.key } });
    const err = await rejectDuplicate(duplicateUpdate, () => conflict('taken')).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(409);
  });

  it('inserts once: a second insert of the same key is false, not an error', async () => {
    const _id = new Types.ObjectId();
    const key = uniqueName('once');
    expect(await insertOnce(Job.create({ _id, key, status: 'NEW' }))).toBe(true);
    expect(await insertOnce(Job.create({ _id, key, status: 'NEW' }))).toBe(false);
    expect(await Job.countDocuments({ key })).toBe(1);
  });
});
