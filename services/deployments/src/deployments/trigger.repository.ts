import type { Types } from 'mongoose';
import {
  askProjectsAsOwner,
  insertOnce,
  ownershipPath,
  projectsClient,
  serviceUnavailable,
  type InternalClient,
  type OutboxWriter,
} from '@platform/shared';
import type { Models } from '../models';
import { sourceAnswer, type ServiceSource, type SourceSnapshot } from '../source/snapshot';
import { NO_LEASE, type DeploymentDoc } from './deployments.model';
import type { IdempotencyKeyDoc } from './idempotency.model';
import type { LogStore } from './log-store';
import { ACTIVE_STATUSES } from './status';
import { StatusWrites } from './status-writes';
import {
  LIST_FIELDS,
  statusEvent,
  toDeployment,
  type Deployment,
  type ServiceRef,
} from './deployment';

/** How long an Idempotency-Key is remembered (contracts.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** An Idempotency-Key's request: what it asked, and the deployment it creates (id and time). */
export interface KeyRecord {
  requestHash: string;
  deploymentId: Types.ObjectId;
  createdAt: Date;
}

export interface NewDeployment extends ServiceRef {
  id: Types.ObjectId;
  commitHash: string;
  commitMessage: string;
  createdAt: Date;
}

/** The caller's service as the projects service confirmed it, with its source now. */
export interface OwnedSource {
  ref: ServiceRef;
  source: ServiceSource;
}

/**
 * What creating a deployment reads and writes: the service's source from the projects service
 * (its answer is the ownership check too), the Idempotency-Keys, the source snapshot, the
 * BUILDING deployment with its event, and the older ones it supersedes.
 */
export class TriggerRepository {
  private readonly projects: InternalClient;
  private readonly writes: StatusWrites;

  /** Status events are written through `outbox`; superseded lines through `logs`. */
  constructor(
    private readonly models: Models,
    private readonly outbox: OutboxWriter,
    logs: LogStore,
    config: { PROJECTS_URL: string; INTERNAL_SECRET: string },
  ) {
    this.projects = projectsClient(config);
    this.writes = new StatusWrites(models, outbox, logs);
  }

  /**
   * The source of the service the caller names (`requested`, the path's ids), asked of the
   * projects service as the caller: 404 unless it is theirs, 503 when projects does not answer
   * (or answers in a shape we do not know: a version mismatch, retried later like an outage).
   */
  async ownedSource(requested: ServiceRef, requestId?: string): Promise<OwnedSource> {
    const path = `${ownershipPath(requested, 'service')}/source`;
    const answer = await askProjectsAsOwner<unknown>(
      this.projects,
      path,
      { accountId: requested.accountId, requestId },
      'Service',
    );
    const parsed = sourceAnswer.safeParse(answer);
    if (!parsed.success) throw serviceUnavailable();
    const { accountId, projectId, serviceId, ...source } = parsed.data;
    return { ref: { accountId, projectId, serviceId }, source };
  }

  /**
   * The key's live record, and whether this request claimed it (false: a repeat, answered with
   * the first one's). Concurrent first uses agree on one record: the insert is on the unique
   * _id. Bounded: each pass inserts, finds a live record, or removes an expired one nobody
   * renewed.
   */
  async claimKey(
    accountId: string,
    key: string,
    fresh: KeyRecord,
  ): Promise<{ record: KeyRecord; claimed: boolean }> {
    const id = `${accountId}:${key}`;
    const keys = this.models.idempotencyKeys;
    for (let pass = 0; pass < 3; pass++) {
      if (await insertOnce(keys.create({ _id: id, ...fresh }))) {
        return { record: fresh, claimed: true };
      }
      const existing = await keys.findById(id).lean<IdempotencyKeyDoc>();
      if (!existing) continue;
      if (fresh.createdAt.getTime() - existing.createdAt.getTime() < IDEMPOTENCY_WINDOW_MS) {
        const { requestHash, deploymentId, createdAt } = existing;
        return { record: { requestHash, deploymentId, createdAt }, claimed: false };
      }
      await keys.deleteOne({ _id: id, createdAt: existing.createdAt });
    }
    throw new Error(`could not claim idempotency key ${id}`);
  }

  /** Forgets the keys older than the window. */
  async pruneExpiredKeys(now = new Date()): Promise<number> {
    const result = await this.models.idempotencyKeys.deleteMany({
      createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) },
    });
    return result.deletedCount;
  }

  /** Keeps the snapshot of deployment `id`; a repeat (an idempotent retry) keeps the first. */
  async saveSnapshot(ref: ServiceRef, id: string, snapshot: SourceSnapshot): Promise<void> {
    await insertOnce(this.models.sources.create({ _id: id, ...ref, ...snapshot }));
  }

  /**
   * Inserts a BUILDING deployment with its creation event in its outbox: one insert. Returns
   * false when a deployment with this id exists already (a repeated idempotent request).
   */
  async insertBuilding(fields: NewDeployment): Promise<boolean> {
    const { id, ...owner } = fields;
    const entry = statusEvent(
      { ...owner, id: id.toHexString() },
      'BUILDING',
      null,
      fields.createdAt,
    );
    return this.outbox.write(this.models.deployments, id, () =>
      insertOnce(
        this.models.deployments.create({
          _id: id,
          accountId: fields.accountId,
          projectId: fields.projectId,
          serviceId: fields.serviceId,
          commitHash: fields.commitHash,
          commitMessage: fields.commitMessage,
          status: 'BUILDING',
          createdAt: fields.createdAt,
          statusChangedAt: fields.createdAt,
          deployedAt: null,
          leaseOwner: null,
          leaseUntil: NO_LEASE,
          attempts: 0,
          handedBack: 0,
          claimedAt: null,
          cancelReason: null,
          outbox: [entry],
          outboxPending: true,
        }),
      ),
    );
  }

  /**
   * Newest wins (contracts.md): cancels the service's deployments still BUILDING that are older
   * than its newest one still running (BUILDING or DEPLOYING), each with `superseded by <that
   * one's id>`. Called after every insert: racing triggers insert in any order, and whichever
   * runs last sees every one of them, so exactly the newest is left. Each cancel writes its line
   * in the log, then is one conditional update from BUILDING (a change that came first wins:
   * StatusWrites.cancel); those running stop at their worker's next heartbeat.
   * Returns the ones it cancelled.
   */
  async supersedeOlder(ref: ServiceRef): Promise<Deployment[]> {
    const ofService = {
      serviceId: ref.serviceId,
      accountId: ref.accountId,
      projectId: ref.projectId,
    };
    // One read: the service's deployments still running, newest first (a few at most: newest
    // wins keeps one BUILDING, racing triggers add theirs for a moment).
    const [newest, ...rest] = await this.models.deployments
      .find({ ...ofService, status: { $in: [...ACTIVE_STATUSES] } }, LIST_FIELDS)
      .sort({ createdAt: -1, _id: -1 })
      .lean<DeploymentDoc[]>();
    if (!newest) return [];
    const older = rest.filter((doc) => doc.status === 'BUILDING');
    const cancelReason = `superseded by ${newest._id.toHexString()}`;
    const reason = { line: `Deployment cancelled: ${cancelReason}.`, cancelReason };
    const cancelled: Deployment[] = [];
    for (const doc of older) {
      // Racing triggers: the one that claims it writes the line and cancels it (claimSupersede).
      const outcome = await this.writes.cancel(toDeployment(doc), reason, { followSteps: false });
      if (outcome.cancelled) cancelled.push(outcome.cancelled);
    }
    return cancelled;
  }
}
