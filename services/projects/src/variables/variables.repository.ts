import type { Model, Types } from 'mongoose';
import type { VariableDocument } from './variables.model';

/** A variable as stored: a plain one with its value, a secret one with its sealed value. */
export interface StoredVariable {
  name: string;
  secret: boolean;
  value: string | null;
  sealed: string | null;
  updatedAt: Date;
}

/** What a PUT writes: the value in the form it is kept in. */
export type VariableWrite = Pick<StoredVariable, 'secret' | 'value' | 'sealed'>;

const FIELDS = { _id: 0, name: 1, secret: 1, value: 1, sealed: 1, updatedAt: 1 } as const;

const toStored = (doc: StoredVariable): StoredVariable => ({
  name: doc.name,
  secret: doc.secret,
  value: doc.value,
  sealed: doc.sealed,
  updatedAt: doc.updatedAt,
});

/** The `variables` collection: one document per variable, unique by `{serviceId, name}`. */
export class VariablesRepository {
  constructor(private readonly model: Model<VariableDocument>) {}

  /** Every variable of the service, sorted by name (through its unique index). */
  async list(serviceId: Types.ObjectId): Promise<StoredVariable[]> {
    return this.model.find({ serviceId }, FIELDS).sort({ name: 1 }).lean<StoredVariable[]>();
  }

  /** Whether the variable is secret, or null when the service has no such variable. */
  async secrecyOf(serviceId: Types.ObjectId, name: string): Promise<boolean | null> {
    const found = await this.model.findOne({ serviceId, name }, { secret: 1 }).lean();
    return found ? found.secret : null;
  }

  /**
   * Replaces the value of the variable if it is still as secret as `wasSecret` said: null when it
   * is gone or changed meanwhile (the caller reads it again).
   */
  async replace(
    serviceId: Types.ObjectId,
    name: string,
    wasSecret: boolean,
    write: VariableWrite,
  ): Promise<StoredVariable | null> {
    const doc = await this.model
      .findOneAndUpdate(
        { serviceId, name, secret: wasSecret },
        { $set: { ...write, updatedAt: new Date() } },
        { new: true },
      )
      .lean<VariableDocument>();
    return doc && toStored(doc);
  }

  /** Inserts a new variable; a name already there rejects it with the duplicate-key error. */
  async insert(
    owner: { accountId: string; projectId: Types.ObjectId; serviceId: Types.ObjectId },
    name: string,
    write: VariableWrite,
  ): Promise<StoredVariable> {
    const now = new Date();
    await this.model.create({ ...owner, name, ...write, createdAt: now, updatedAt: now });
    return { name, ...write, updatedAt: now };
  }

  /** True when there was such a variable to remove. */
  async remove(serviceId: Types.ObjectId, name: string): Promise<boolean> {
    return (await this.model.deleteOne({ serviceId, name })).deletedCount === 1;
  }

  /** The cascade of a deleted service. */
  /** Secret variables after `after` (by id), a batch at a time: what re-sealing goes through. */
  async secretsAfter(after: Types.ObjectId | null, batch: number) {
    return this.model
      .find(
        { secret: true, ...(after && { _id: { $gt: after } }) },
        { _id: 1, serviceId: 1, name: 1, sealed: 1 },
      )
      .sort({ _id: 1 })
      .limit(batch)
      .lean<Pick<VariableDocument, '_id' | 'serviceId' | 'name' | 'sealed'>[]>();
  }

  /** Replaces a sealed value if it is still the one read (a PUT meanwhile wins). */
  async replaceSealed(id: Types.ObjectId, from: string, to: string): Promise<boolean> {
    const result = await this.model.updateOne({ _id: id, sealed: from }, { $set: { sealed: to } });
    return result.modifiedCount === 1;
  }

  async purgeOfService(serviceId: Types.ObjectId): Promise<number> {
    return (await this.model.deleteMany({ serviceId })).deletedCount;
  }

  /** The cascade of a deleted project. */
  async purgeOfProject(projectId: Types.ObjectId): Promise<number> {
    return (await this.model.deleteMany({ projectId })).deletedCount;
  }
}
