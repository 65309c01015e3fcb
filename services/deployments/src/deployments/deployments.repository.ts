import { Types } from 'mongoose';
import {
  TOPICS,
  isDuplicateKeyError,
  newEvent,
  outboxEntry,
  parseObjectId,
  type DeploymentStatusChangedEvent,
  type OutboxWriter,
} from '@platform/shared';
import {
  transitionId,
  type DeploymentDoc,
  type DeploymentLogsDoc,
  type DeploymentModels,
  type TimelineEntryDoc,
  type TransitionDoc,
} from './deployments.model';
import { DeploymentTimeline, descendingSeqs } from './deployments.timeline';
import {
  assertTransitionAllowed,
  isFinal,
  resolveStatus,
  type DeploymentStatus,
  type StatusChange,
} from './status';

/** A deployment as the rest of the service sees it: its status as its transitions give it. */
export interface Deployment {
  id: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  status: DeploymentStatus;
  commitHash: string;
  commitMessage: string;
  logs: string;
  createdAt: Date;
  statusChangedAt: Date;
  deployedAt: Date | null;
}

/** The service a deployment belongs to, as addressed in the URL. */
export interface ServiceRef {
  accountId: string;
  projectId: string;
  serviceId: string;
}

export interface NewDeployment extends ServiceRef {
  id: Types.ObjectId;
  commitHash: string;
  commitMessage: string;
  createdAt: Date;
}

/** A deployment as a list gives it: with its place in the service's timeline (the cursor). */
export type ListedDeployment = Deployment & { timelineSeq: number };

type DeploymentFields = Omit<Deployment, 'status' | 'statusChangedAt' | 'deployedAt'>;

/**
 * The statuses a deployment can leave: a change is recorded under `transitionId(id, left)`, so
 * these keys are every change that can exist (the creation, `:created`, is BUILDING at
 * createdAt, which resolveStatus starts from anyway).
 */
const LEFT_STATUSES: readonly DeploymentStatus[] = ['BUILDING', 'DEPLOYING'];

/** Timeline entries read at least per further step down a list (past skipped entries). */
const MIN_LIST_BATCH = 8;

const fieldsOf = (doc: DeploymentDoc): DeploymentFields => ({
  id: doc._id.toHexString(),
  accountId: doc.accountId,
  projectId: doc.projectId,
  serviceId: doc.serviceId,
  commitHash: doc.commitHash,
  commitMessage: doc.commitMessage ?? '',
  // Read from the logs document by those who show them (findInService, findById).
  logs: '',
  createdAt: doc.createdAt,
});

const belongsTo = (doc: ServiceRef, ref: ServiceRef) =>
  doc.accountId === ref.accountId &&
  doc.projectId === ref.projectId &&
  doc.serviceId === ref.serviceId;

/** A status change with its deployment.status-changed event, as a document to insert. */
function transitionRecord(
  deployment: Pick<Deployment, 'id' | 'accountId' | 'projectId' | 'serviceId' | 'commitHash'>,
  from: DeploymentStatus | null,
  to: DeploymentStatus,
  at: Date,
  attempt: number | null,
): TransitionDoc {
  const event = newEvent<DeploymentStatusChangedEvent>(
    {
      type: 'deployment.status_changed',
      accountId: deployment.accountId,
      projectId: deployment.projectId,
      serviceId: deployment.serviceId,
      deploymentId: deployment.id,
      status: to,
      previousStatus: from,
      commitHash: deployment.commitHash,
    },
    at,
  );
  return {
    _id: transitionId(deployment.id, from),
    deploymentId: deployment.id,
    accountId: deployment.accountId,
    projectId: deployment.projectId,
    serviceId: deployment.serviceId,
    from,
    to,
    at,
    attempt,
    outbox: [outboxEntry(TOPICS.deploymentStatusChanged, deployment.id, event)],
    outboxPending: true,
  };
}

/** Inserts; false when the _id exists already. */
async function insertOnce(insert: () => Promise<unknown>): Promise<boolean> {
  try {
    await insert();
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

export class DeploymentsRepository {
  readonly timeline: DeploymentTimeline;

  /** Status changes are written through `outbox` (the relay publishes them at once). */
  constructor(
    private readonly models: DeploymentModels,
    private readonly outbox: OutboxWriter,
  ) {
    this.timeline = new DeploymentTimeline(models);
  }

  /**
   * Inserts a BUILDING deployment: its timeline entry, its place in the pipeline's queue, the
   * document, its creation event, in that order (no transactions: each step is one insert, and
   * whatever a crash leaves between them is harmless, see below). The entry gives the list
   * position and the createdAt (`fields.createdAt`, or just after the service's previous
   * deployment when that is later). Returns null when a deployment with this id exists already
   * (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<Deployment | null> {
    const id = fields.id.toHexString();
    // Entry first: the document is inserted knowing its place and never updated for it. An
    // entry whose document never comes (a crash, or a racing repeat that lost the insert below)
    // is skipped by the list, because no deployment points back at it.
    const place = await this.timeline.append(fields, id, fields.createdAt);
    const deployment: Deployment = {
      id,
      accountId: fields.accountId,
      projectId: fields.projectId,
      serviceId: fields.serviceId,
      commitHash: fields.commitHash,
      commitMessage: fields.commitMessage,
      logs: '',
      createdAt: place.createdAt,
      status: 'BUILDING',
      statusChangedAt: place.createdAt,
      deployedAt: null,
    };
    // Queued first: a deployment is never without its way to the pipeline (a queue entry whose
    // deployment never came is dropped by the pipeline). Its (empty) logs before it, so the
    // pipeline always finds them; logs without a deployment go with the project's cascade.
    await this.enqueue(deployment);
    await this.insertLogs(deployment);
    const inserted = await insertOnce(() =>
      this.models.deployments.create({
        _id: fields.id,
        accountId: deployment.accountId,
        projectId: deployment.projectId,
        serviceId: deployment.serviceId,
        commitHash: deployment.commitHash,
        commitMessage: deployment.commitMessage,
        createdAt: deployment.createdAt,
        timelineSeq: place.seq,
      }),
    );
    if (!inserted) return null;
    await this.recordCreation(deployment);
    return deployment;
  }

  /**
   * Makes good what an earlier try of the same request may have left undone when it stopped
   * between its inserts: the queue entry (while there is work) and the creation event.
   */
  async completeCreation(deployment: Deployment): Promise<void> {
    if (!isFinal(deployment.status)) await this.enqueue(deployment);
    if (!(await this.recordCreation(deployment))) {
      // The earlier try may have stopped before telling the relay: publish it now (the relay
      // finds nothing to do if it went out already).
      await this.outbox.write(this.models.transitions, transitionId(deployment.id, null), () =>
        Promise.resolve(),
      );
    }
  }

  /** The creation event (BUILDING, no previous status), unless it is recorded already. */
  async recordCreation(deployment: Deployment): Promise<boolean> {
    const record = transitionRecord(deployment, null, 'BUILDING', deployment.createdAt, null);
    return this.outbox.write(this.models.transitions, record._id, () =>
      insertOnce(() => this.models.transitions.create(record)),
    );
  }

  /** With its logs (the pipeline carries them on). */
  async findById(id: Types.ObjectId | string): Promise<Deployment | null> {
    const doc = await this.models.deployments.findById(id).lean<DeploymentDoc>();
    if (!doc) return null;
    const [deployment] = await this.withStatuses([fieldsOf(doc)]);
    return { ...deployment!, logs: await this.logsOf(deployment!.id) };
  }

  /** A deployment only when it belongs to this service of this project and account. */
  async findInService(ref: ServiceRef, id: string): Promise<Deployment | null> {
    // By _id alone (the only lookup FerretDB indexes), the owner checked here.
    const doc = await this.models.deployments
      .findById(parseObjectId(id, 'Deployment'))
      .lean<DeploymentDoc>();
    if (!doc || !belongsTo(doc, ref)) return null;
    const [deployment] = await this.withStatuses([fieldsOf(doc)]);
    // The pipeline writes the logs before each status change, so logs read after the status
    // are at least as new as it.
    return { ...deployment!, logs: await this.logsOf(deployment!.id) };
  }

  /** The timeline place of a deployment of this service; null when it is not one. */
  async timelineSeqOf(ref: ServiceRef, id: string): Promise<number | null> {
    const doc = await this.models.deployments
      .findById(parseObjectId(id, 'Deployment'))
      .lean<DeploymentDoc>();
    return doc && belongsTo(doc, ref) && typeof doc.timelineSeq === 'number'
      ? doc.timelineSeq
      : null;
  }

  /**
   * Newest first: up to `limit + 1` deployments, so the caller knows whether more remain; only
   * those below timeline place `belowSeq` when given (the cursor). Every read names _ids, so a
   * page costs the same at any depth and any size of service or collection: the timeline
   * entries (one `$in`; the first page finds the end of the timeline from its head), their
   * deployments (one `$in`), their status changes (one `$in`). Entries that do not count are
   * skipped, and the next keys down read, until the page is full or the timeline ends.
   */
  async listInService(
    ref: ServiceRef,
    limit: number,
    belowSeq?: number,
  ): Promise<ListedDeployment[]> {
    const want = limit + 1;
    let next: number;
    let known = new Map<number, TimelineEntryDoc>();
    if (belowSeq === undefined) {
      // Reading the end also reads the keys just below the head: usually the whole page.
      const end = await this.timeline.end(ref.serviceId, want);
      next = end.seq;
      known = end.seen;
    } else {
      next = belowSeq - 1;
    }
    const rows: Array<DeploymentFields & { timelineSeq: number }> = [];
    const changes = new Map<string, StatusChange[]>();
    let batch = want;
    while (rows.length < want && next >= 1) {
      const seqs = descendingSeqs(next, next - batch + 1);
      const unread = seqs.filter((seq) => !known.has(seq));
      for (const entry of await this.timeline.entries(ref.serviceId, unread)) {
        known.set(entry.seq, entry);
      }
      const entries = seqs.flatMap((seq) => known.get(seq) ?? []);
      // A service's entries have no holes (see deployments.timeline.ts): none here, none below.
      // And they all belong to the service's account and project: any other is not this list.
      if (entries.length === 0 || !entries.every((e) => belongsTo(e, ref))) break;
      // The status changes are keyed by the deployment ids the entries name: read with the
      // deployments rather than after them (those of a skipped entry are simply not used).
      const ids = entries.map((e) => e.deploymentId);
      const [docs] = await Promise.all([
        this.deploymentsQuery(ids).lean<DeploymentDoc[]>(),
        this.statusChangesOf(ids, changes),
      ]);
      const byId = new Map(docs.map((doc) => [doc._id.toHexString(), doc]));
      for (const entry of entries) {
        const doc = byId.get(entry.deploymentId);
        // An entry counts only when its deployment exists and points back at it: not one left
        // by a trigger that stopped before inserting the deployment, nor one a repeat of the
        // same idempotent request made and lost (the deployment names the winner's entry).
        if (!doc || doc.timelineSeq !== entry.seq || !belongsTo(doc, ref)) continue;
        rows.push({ ...fieldsOf(doc), timelineSeq: entry.seq });
        if (rows.length === want) break;
      }
      next = seqs[seqs.length - 1]! - 1;
      batch = Math.max(MIN_LIST_BATCH, 2 * (want - rows.length));
    }
    return rows.map((row) => ({
      ...row,
      ...resolveStatus(row.createdAt, changes.get(row.id) ?? []),
    }));
  }

  /** A list's deployments by _id (exposed so its plan can be checked); logs live apart. */
  deploymentsQuery(ids: readonly string[]) {
    return this.models.deployments.find({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) } });
  }

  /** Every status change the deployments can have, by _id (exposed so its plan can be checked). */
  statusChangesQuery(ids: readonly string[]) {
    return this.models.transitions.find(
      { _id: { $in: ids.flatMap((id) => LEFT_STATUSES.map((left) => transitionId(id, left))) } },
      { deploymentId: 1, from: 1, to: 1, at: 1 },
    );
  }

  /**
   * Records `current` → `to` with its event, only if `current.status` has not been left yet:
   * one insert whose _id is the status left, so of two racing changes exactly one is recorded.
   * Returns the deployment as it now is, or null when another change won.
   */
  async transition(
    current: Deployment,
    to: DeploymentStatus,
    attempt: number | null = null,
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    let at = new Date();
    const id = transitionId(current.id, current.status);
    const recorded = await this.outbox.write(this.models.transitions, id, () => {
      // Stamped as it is written, after the outbox marker.
      at = new Date();
      return insertOnce(() =>
        this.models.transitions.create(transitionRecord(current, current.status, to, at, attempt)),
      );
    });
    if (!recorded) return null;
    if (!(await this.models.deployments.exists({ _id: new Types.ObjectId(current.id) }))) {
      // Deleted meanwhile (its project or service): leave nothing behind the cascade.
      await this.models.transitions.deleteOne({ _id: transitionId(current.id, current.status) });
      return null;
    }
    return {
      ...current,
      status: to,
      statusChangedAt: at,
      deployedAt: to === 'DEPLOYED' ? at : null,
    };
  }

  /** Nothing left for the pipeline to run. */
  async dequeue(id: string): Promise<void> {
    await this.models.queue.deleteOne({ _id: id });
  }

  async deleteByProject(accountId: string, projectId: string): Promise<number> {
    return this.deleteWhere({ accountId, projectId }, { projectId });
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<number> {
    return this.deleteWhere({ accountId, projectId, serviceId }, { projectId, serviceId });
  }

  private async deleteWhere(
    owned: { accountId: string; projectId: string; serviceId?: string },
    scope: { projectId: string; serviceId?: string },
  ) {
    await this.models.queue.deleteMany(scope);
    // A worker still running one of them finds its lease gone at its next heartbeat and stops;
    // meanwhile its logs are gone (it can write none back) and so is its deployment.
    await this.models.leases.deleteMany(scope);
    await this.models.logs.deleteMany(scope);
    const result = await this.models.deployments.deleteMany(owned);
    await this.timeline.deleteWhere(owned);
    // Last: a status change a worker records after this finds its deployment gone and takes
    // it back (transition()); one recorded before is deleted here.
    await this.models.transitions.deleteMany({ ...scope, accountId: owned.accountId });
    return result.deletedCount;
  }

  private async logsOf(id: string): Promise<string> {
    const doc = await this.models.logs.findById(id).lean<DeploymentLogsDoc>();
    return doc?.logs ?? '';
  }

  private async insertLogs(d: Pick<Deployment, 'id' | 'projectId' | 'serviceId'>) {
    await insertOnce(() =>
      this.models.logs.create({ _id: d.id, projectId: d.projectId, serviceId: d.serviceId }),
    );
  }

  private async enqueue(d: Pick<Deployment, 'id' | 'projectId' | 'serviceId' | 'createdAt'>) {
    await insertOnce(() =>
      this.models.queue.create({
        _id: d.id,
        projectId: d.projectId,
        serviceId: d.serviceId,
        createdAt: d.createdAt,
      }),
    );
  }

  /** Each deployment's status from its recorded changes: one read for all of them. */
  private async withStatuses<T extends DeploymentFields>(
    rows: T[],
  ): Promise<Array<T & Pick<Deployment, 'status' | 'statusChangedAt' | 'deployedAt'>>> {
    const changes = await this.statusChangesOf(rows.map((row) => row.id));
    return rows.map((row) => ({
      ...row,
      ...resolveStatus(row.createdAt, changes.get(row.id) ?? []),
    }));
  }

  /** The recorded changes of these deployments, added to `into` by deployment id. */
  private async statusChangesOf(
    ids: readonly string[],
    into = new Map<string, StatusChange[]>(),
  ): Promise<Map<string, StatusChange[]>> {
    if (ids.length === 0) return into;
    for (const change of await this.statusChangesQuery(ids).lean<TransitionDoc[]>()) {
      into.set(change.deploymentId, [...(into.get(change.deploymentId) ?? []), change]);
    }
    return into;
  }
}
