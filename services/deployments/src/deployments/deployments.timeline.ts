import { isDuplicateKeyError } from '@platform/shared';
import {
  timelineEntryId,
  type DeploymentModels,
  type TimelineEntryDoc,
  type TimelineHeadDoc,
} from './deployments.model';
import type { ServiceRef } from './deployments.repository';

/*
 * A service's deployments in the order they were created, readable by _id alone.
 *
 * Why: the local database (FerretDB 1.24, SQLite) answers only an `_id` condition from an index
 * (equality or `$in`, with our patch); any other filter, and every sort, reads the whole
 * collection in Go: 33 s for a page of a service with 100,000 deployments. So the list does not
 * ask "this service's deployments, newest first"; it names the documents it wants:
 * - entry `<service>:<seq>` (seq = 1, 2, …) says which deployment is the service's seq-th. A
 *   page is the keys seq, seq-1, … as one `$in`. On MongoDB the same reads are IDHACK/IXSCAN.
 * - The sequence is allocated by inserting the entry: the insert on the unique _id is the one
 *   atomic step FerretDB offers (it isolates no concurrent updates and has no transactions).
 *   A duplicate _id means another trigger took that number: try the next.
 * - Each entry is inserted only after its predecessor was seen (probed), so the entries of a
 *   service are always 1…end without holes, and each entry's createdAt is later than its
 *   predecessor's: sequence order is createdAt order (contracts.md: createdAt desc, then id),
 *   with no ties, whatever the clocks of concurrent writers.
 * - The head `{_id: service, seq}` is only where to start looking: written after the entry with
 *   `$max`, it can lag (two concurrent updates may undo each other), so every reader and writer
 *   probes forward from it with a `$in` of the next keys until one is missing.
 * The deployment document carries its `timelineSeq` (set at insert, never updated): an entry
 * counts only when its deployment exists and points back at it. See DeploymentsRepository.
 */

/** Keys read per probe past the head (it rarely lags by more than the triggers in flight). */
const PROBE_WINDOW = 8;
/** Tries to allocate a number; each lost race means another trigger took one meanwhile. */
const MAX_APPEND_TRIES = 100;

/** The place a new deployment got: its number and its createdAt. */
export interface TimelinePlace {
  seq: number;
  createdAt: Date;
}

/** `from`, `from - 1`, … down to `to` (inclusive, ≥ 1). */
export function descendingSeqs(from: number, to: number): number[] {
  const seqs: number[] = [];
  for (let seq = from; seq >= Math.max(1, to); seq--) seqs.push(seq);
  return seqs;
}

export class DeploymentTimeline {
  constructor(private readonly models: Pick<DeploymentModels, 'timeline' | 'timelineHeads'>) {}

  /** The query for these entries of the service (those that exist): one `_id $in`. */
  entriesQuery(serviceId: string, seqs: readonly number[]) {
    return this.models.timeline.find({
      _id: { $in: seqs.map((seq) => timelineEntryId(serviceId, seq)) },
    });
  }

  async entries(serviceId: string, seqs: readonly number[]): Promise<TimelineEntryDoc[]> {
    if (seqs.length === 0) return [];
    return this.entriesQuery(serviceId, seqs).lean<TimelineEntryDoc[]>();
  }

  /**
   * The service's last entry number (0 when it has none), and the entries read on the way:
   * from `lookBehind` below the head's hint upward, so a first page needs no further read when
   * the head is current.
   */
  async end(
    serviceId: string,
    lookBehind = 0,
  ): Promise<{ seq: number; seen: Map<number, TimelineEntryDoc> }> {
    return this.probeEnd(serviceId, await this.headHint(serviceId), lookBehind);
  }

  /**
   * Allocates the next number of the service's timeline for `deploymentId`, with a createdAt no
   * earlier than `notBefore` and later than the previous entry's.
   */
  async append(ref: ServiceRef, deploymentId: string, notBefore: Date): Promise<TimelinePlace> {
    let from = await this.headHint(ref.serviceId);
    for (let attempt = 0; attempt < MAX_APPEND_TRIES; attempt++) {
      const { seq: end, seen } = await this.probeEnd(ref.serviceId, from, 0);
      const previous = seen.get(end);
      const place: TimelinePlace = {
        seq: end + 1,
        createdAt: new Date(
          Math.max(notBefore.getTime(), previous ? previous.createdAt.getTime() + 1 : 0),
        ),
      };
      try {
        await this.models.timeline.create({
          _id: timelineEntryId(ref.serviceId, place.seq),
          seq: place.seq,
          deploymentId,
          accountId: ref.accountId,
          projectId: ref.projectId,
          serviceId: ref.serviceId,
          createdAt: place.createdAt,
        } satisfies TimelineEntryDoc);
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // Taken by a concurrent trigger: that entry is now where the timeline ends, or near.
        from = place.seq;
        continue;
      }
      await this.raiseHead(ref, place.seq);
      return place;
    }
    throw new Error(`could not allocate a timeline entry for service ${ref.serviceId}`);
  }

  /** Removes the entries and heads of a project, or of one of its services. */
  async deleteWhere(owned: { accountId: string; projectId: string; serviceId?: string }) {
    const heads = owned.serviceId
      ? { _id: owned.serviceId, accountId: owned.accountId, projectId: owned.projectId }
      : { accountId: owned.accountId, projectId: owned.projectId };
    await this.models.timeline.deleteMany(owned);
    await this.models.timelineHeads.deleteMany(heads);
  }

  private async headHint(serviceId: string): Promise<number> {
    const head = await this.models.timelineHeads
      .findById(serviceId, { seq: 1 })
      .lean<Pick<TimelineHeadDoc, 'seq'>>();
    return head?.seq ?? 0;
  }

  /**
   * Reads forward from `from` (an entry known to have existed, or 0) until a key is missing.
   * Entries have no holes, so the key before the first missing one is the end.
   */
  private async probeEnd(serviceId: string, from: number, lookBehind: number) {
    const seen = new Map<number, TimelineEntryDoc>();
    let start = from;
    let behind = lookBehind;
    for (;;) {
      const found = await this.entries(
        serviceId,
        descendingSeqs(start + PROBE_WINDOW, start - behind),
      );
      for (const entry of found) seen.set(entry.seq, entry);
      if (start > 0 && !seen.has(start)) {
        // The hint names an entry that is gone (the service's timeline was deleted): start over.
        start = 0;
        behind = 0;
        continue;
      }
      let end = start;
      while (seen.has(end + 1)) end++;
      if (end < start + PROBE_WINDOW) return { seq: end, seen };
      start = end;
      behind = 0;
    }
  }

  /**
   * Moves the hint up to `seq`. Not an upsert: on FerretDB two concurrent upserts of one _id
   * can fail with an error that is not a duplicate key; inserting the head is the atomic step.
   */
  private async raiseHead(ref: ServiceRef, seq: number): Promise<void> {
    const raise = () =>
      this.models.timelineHeads.updateOne({ _id: ref.serviceId }, { $max: { seq } });
    if ((await raise()).matchedCount > 0) return;
    try {
      await this.models.timelineHeads.create({
        _id: ref.serviceId,
        accountId: ref.accountId,
        projectId: ref.projectId,
        seq,
      } satisfies TimelineHeadDoc);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      await raise();
    }
  }
}
