import type { FilterQuery, Model, UpdateQuery } from 'mongoose';
import { isDuplicateKeyError } from './mongo';
import { withOutbox, type OutboxEntry } from './outbox';

/**
 * The storage patterns every service writes the same way (docs/architecture.md, Storage):
 * a state change is one conditional single-document write, uniqueness is a unique index whose
 * violation (11000, on insert and on update alike) becomes the caller's error.
 */

/** Runs `write`; a duplicate key becomes `onDuplicate()` (usually `conflict(...)`). */
export async function rejectDuplicate<T>(write: Promise<T>, onDuplicate: () => Error): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (isDuplicateKeyError(err)) throw onDuplicate();
    throw err;
  }
}

/** Inserts through `insert`; false when the key exists already (a repeat, or a racing twin). */
export async function insertOnce(insert: Promise<unknown>): Promise<boolean> {
  try {
    await insert;
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

export interface Transition<D, S extends string> {
  /** Which document: its `_id` and whatever else must hold (the owner). */
  where: FilterQuery<D>;
  /** The state field (default `status`). */
  field?: string;
  /** The states the change may leave. */
  from: readonly S[];
  to: S;
  /** Further fields written with the change (timestamps). */
  set?: Record<string, unknown>;
  /** Events announcing it, written into the document's outbox in the same update. */
  events?: OutboxEntry[];
}

/**
 * A state change as one conditional `findOneAndUpdate({...where, status: {$in: from}})`: of any
 * number of racing changes of one document exactly one matches. Returns the document as changed,
 * or null when it was not in an allowed state (someone else won, or it is gone): the caller says
 * which.
 */
export async function transition<D, S extends string>(
  model: Model<D>,
  change: Transition<D, S>,
): Promise<D | null> {
  const field = change.field ?? 'status';
  const $set = { ...change.set, [field]: change.to };
  const update = change.events?.length ? withOutbox({ $set }, ...change.events) : { $set };
  const filter = { ...change.where, [field]: { $in: [...change.from] } } as FilterQuery<D>;
  return (await model
    .findOneAndUpdate(filter, update as UpdateQuery<D>, { new: true })
    .lean()) as D | null;
}
