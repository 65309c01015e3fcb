import { mongo } from 'mongoose';
import { seededRandom } from './database';

/**
 * Deployments-like documents for keyset paging: a few services, few distinct `createdAt` values
 * (many ties, broken by `_id`), `_id`s unrelated to `createdAt`, a status.
 */
export interface Listed {
  _id: mongo.ObjectId;
  serviceId: string;
  status: string;
  createdAt: Date;
}

/** Uneven on purpose: half, a third and a sixth of the documents. */
export const SERVICES = ['svc-a', 'svc-b', 'svc-c'] as const;
const SERVICE_SHARES = [0.5, 0.85, 1];
export const STATUSES = ['BUILDING', 'READY', 'FAILED'] as const;
export const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

export function makeListed(count: number, seed: number, distinctTimes = 25): Listed[] {
  const random = seededRandom(seed);
  const base = Date.UTC(2026, 0, 1);
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const service = () => {
    const r = random();
    return SERVICES[SERVICE_SHARES.findIndex((share) => r < share)]!;
  };
  return Array.from({ length: count }, () => ({
    _id: new mongo.ObjectId(),
    serviceId: service(),
    status: pick(STATUSES),
    createdAt: new Date(base + Math.floor(random() * distinctTimes) * 1_000),
  }));
}

/**
 * `count` documents of makeListed stored twice: in `listed` under a service's list index
 * `{serviceId, createdAt: -1, _id: -1}`, and in `listed_by_status` under the list by status
 * `{serviceId, status, createdAt: -1, _id: -1}`. One index per collection, so which one serves a
 * query is not the planner's choice. Inserted in _id order, which is random with respect to
 * createdAt: storage order is no sort order.
 */
export async function storeListed(db: mongo.Db, count: number, seed: number) {
  const documents = makeListed(count, seed);
  const listed = db.collection<Listed>('listed');
  const listedByStatus = db.collection<Listed>('listed_by_status');
  await listed.createIndex({ serviceId: 1, createdAt: -1, _id: -1 });
  await listedByStatus.createIndex({ serviceId: 1, status: 1, createdAt: -1, _id: -1 });
  await listed.insertMany(documents.map((d) => ({ ...d })));
  await listedByStatus.insertMany(documents.map((d) => ({ ...d })));
  return { documents, listed, listedByStatus };
}

/** The order NEWEST_FIRST defines, computed here: createdAt descending, then _id descending. */
export function newestFirst(a: Listed, b: Listed): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  const [x, y] = [a._id.toHexString(), b._id.toHexString()];
  return x < y ? 1 : x > y ? -1 : 0;
}

/** The product's keyset filter: what comes after `last` in NEWEST_FIRST order. */
export function after(last: Pick<Listed, '_id' | 'createdAt'>): mongo.Filter<Listed> {
  return {
    $or: [
      { createdAt: { $lt: last.createdAt } },
      { createdAt: last.createdAt, _id: { $lt: last._id } },
    ],
  };
}

/** Pages through `filter` `pageSize` at a time, as a client would, and returns every page. */
export async function pageThrough(
  collection: mongo.Collection<Listed>,
  filter: mongo.Filter<Listed>,
  pageSize: number,
  maxPages: number,
): Promise<Listed[][]> {
  const pages: Listed[][] = [];
  let last: Listed | undefined;
  while (pages.length < maxPages) {
    const page = await collection
      .find(last ? { ...filter, ...after(last) } : filter)
      .sort(NEWEST_FIRST)
      .limit(pageSize)
      .toArray();
    if (page.length === 0) break;
    pages.push(page);
    if (page.length < pageSize) break;
    last = page[page.length - 1];
  }
  return pages;
}
