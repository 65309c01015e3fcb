import { Types } from 'mongoose';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { LogStore } from '../deployments/log-store';
import {
  createdBefore,
  toDeployment,
  type Deployment,
} from '../deployments/deployments.repository';
import { ACTIVE_STATUSES, type DeploymentStatus } from '../deployments/status';
import type { Models } from '../models';

/** How far back "served least recently" looks when the pipeline chooses between accounts. */
const FAIRNESS_MEMORY_MS = 60 * 60 * 1000;
/** Deployments of one account looked at per claim (past services that must wait their turn). */
const CANDIDATES_PER_ACCOUNT = 20;
/** The latest claims read to learn when each waiting account was served last. */
const RECENT_CLAIMS = 200;

/** A worker's hold on a deployment: one attempt at running it. */
export interface Lease {
  deploymentId: string;
  owner: string;
  /** The claim's number: the deployment's `attempts` when it was claimed. */
  attempt: number;
  leaseUntil: Date;
  /** Earlier attempts whose worker vanished without giving the deployment back. */
  lostAttempts: number;
}

export interface Claim {
  deployment: Deployment;
  lease: Lease;
}

/** What a heartbeat found: still ours, or why not. */
export type LeaseState =
  | { held: true }
  | { held: false; reason: 'deleted' | 'lease-lost' }
  | { held: false; reason: 'status-changed'; now: Deployment };

/**
 * The pipeline's reads and writes. Work is claimed, renewed and given back by conditional
 * updates of the deployment document itself (its `leaseOwner`, `leaseUntil` and `attempts`), so
 * two workers never hold one deployment; status changes go through the deployments repository
 * with the lease as a further condition.
 */
export class PipelineRepository {
  private readonly logs: LogStore;

  constructor(
    private readonly models: Models,
    logLimitBytes: number,
  ) {
    this.logs = new LogStore(models, logLimitBytes);
  }

  /**
   * Takes a deployment still to run that nobody holds (never claimed, handed back, or its
   * worker's lease expired), choosing fairly between accounts (contracts.md: no account can
   * starve another): first the accounts with the fewest deployments running, among those the
   * one served least recently (never, or longest ago), then that account's oldest deployment
   * whose service runs nothing older (one deployment of a service runs at a time: an older
   * DEPLOYING one finishes first).
   * The claim itself is one conditional update, so racing workers take different ones.
   */
  async claimNext(owner: string, leaseMs: number, now = new Date()): Promise<Claim | null> {
    const claimable = { status: { $in: [...ACTIVE_STATUSES] }, leaseUntil: { $lte: now } };
    const accounts = (await this.models.deployments.distinct('accountId', claimable)).map(String);
    if (accounts.length === 0) return null;
    const [held, recentClaims] = await Promise.all([
      // As many as the pipeline's capacity: what every worker holds now.
      this.models.deployments
        .find({ status: { $in: [...ACTIVE_STATUSES] }, leaseUntil: { $gt: now } }, { accountId: 1 })
        .lean<Pick<DeploymentDoc, 'accountId'>[]>(),
      this.models.deployments
        .find(
          {
            accountId: { $in: accounts },
            claimedAt: { $gt: new Date(now.getTime() - FAIRNESS_MEMORY_MS) },
          },
          { accountId: 1, claimedAt: 1 },
        )
        .sort({ claimedAt: -1 })
        .limit(RECENT_CLAIMS)
        .lean<Pick<DeploymentDoc, 'accountId' | 'claimedAt'>[]>(),
    ]);
    const running = new Map<string, number>();
    for (const { accountId } of held) running.set(accountId, (running.get(accountId) ?? 0) + 1);
    // Newest first, so an account's first claim in the list is its last one.
    const servedAt = new Map<string, number>();
    for (const { accountId, claimedAt } of recentClaims) {
      if (!servedAt.has(accountId)) servedAt.set(accountId, claimedAt?.getTime() ?? 0);
    }
    const order = accounts
      .map((accountId) => ({
        accountId,
        running: running.get(accountId) ?? 0,
        served: servedAt.get(accountId) ?? 0,
      }))
      .sort(
        (a, b) =>
          a.running - b.running || a.served - b.served || a.accountId.localeCompare(b.accountId),
      );

    for (const { accountId } of order) {
      const candidates = await this.models.deployments
        .find({ ...claimable, accountId }, { serviceId: 1, createdAt: 1 })
        .sort({ createdAt: 1 })
        .limit(CANDIDATES_PER_ACCOUNT)
        .lean<Pick<DeploymentDoc, '_id' | 'serviceId' | 'createdAt'>[]>();
      for (const candidate of candidates) {
        const olderRunsFirst = await this.models.deployments.exists({
          serviceId: candidate.serviceId,
          status: { $in: [...ACTIVE_STATUSES] },
          ...createdBefore(candidate.createdAt, candidate._id),
        });
        if (olderRunsFirst) continue;
        const claim = await this.claim(candidate._id, owner, leaseMs, now);
        if (claim) return claim;
      }
    }
    return null;
  }

  /** One conditional update: the deployment is ours when it was still claimable. */
  private async claim(
    id: Types.ObjectId,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<Claim | null> {
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const doc = await this.models.deployments
      .findOneAndUpdate(
        { _id: id, status: { $in: [...ACTIVE_STATUSES] }, leaseUntil: { $lte: now } },
        { $set: { leaseOwner: owner, leaseUntil, claimedAt: now }, $inc: { attempts: 1 } },
        { new: true },
      )
      .lean<DeploymentDoc>();
    if (!doc) return null;
    const deployment = toDeployment(doc);
    await this.openLogs(deployment);
    return {
      deployment,
      lease: {
        deploymentId: deployment.id,
        owner,
        attempt: doc.attempts,
        leaseUntil,
        lostAttempts: doc.attempts - 1 - doc.handedBack,
      },
    };
  }

  /** Extends the lease while the deployment is still ours and still in `status`. */
  async renew(lease: Lease, status: DeploymentStatus, leaseUntil: Date): Promise<LeaseState> {
    const result = await this.models.deployments.updateOne(
      { ...this.heldBy(lease), status },
      { $set: { leaseUntil } },
    );
    if (result.matchedCount === 1) return { held: true };
    return this.whyNotHeld(lease);
  }

  /** Why a conditional write under `lease` matched nothing. */
  async whyNotHeld(lease: Lease): Promise<LeaseState> {
    const doc = await this.models.deployments
      .findById(new Types.ObjectId(lease.deploymentId))
      .lean<DeploymentDoc>();
    if (!doc) return { held: false, reason: 'deleted' };
    if (doc.attempts !== lease.attempt) return { held: false, reason: 'lease-lost' };
    return { held: false, reason: 'status-changed', now: toDeployment(doc) };
  }

  /**
   * Appends output (whole lines) to the deployment's log, with where its app's log goes on when
   * given; false when the deployment is gone, or a later claim has written (a worker that lost
   * its lease never writes after the one that has it).
   */
  async writeLogs(
    lease: Lease,
    text: string,
    release?: { releaseId: string; offset: number },
  ): Promise<boolean> {
    return this.logs.append(lease.deploymentId, text, {
      attempt: lease.attempt,
      ...(release && { set: { release: { id: release.releaseId, offset: release.offset } } }),
    });
  }

  /** Gives the deployment back unfinished (shutting down): the next worker claims it at once. */
  async handBack(lease: Lease): Promise<void> {
    await this.models.deployments.updateOne(this.heldBy(lease), {
      $set: { leaseOwner: null, leaseUntil: NO_LEASE },
      $inc: { handedBack: 1 },
    });
  }

  private heldBy(lease: Lease) {
    return {
      _id: new Types.ObjectId(lease.deploymentId),
      leaseOwner: lease.owner,
      attempts: lease.attempt,
    };
  }

  /**
   * The deployment's log, made on its first claim. A cascade that removed the deployment
   * meanwhile has its log removed here too, so none outlives its deployment.
   */
  private async openLogs(deployment: Deployment): Promise<void> {
    await this.logs.create({ ...deployment, deploymentId: deployment.id });
    if (!(await this.models.deployments.exists({ _id: new Types.ObjectId(deployment.id) }))) {
      await this.models.logs.deleteOne({ _id: deployment.id });
    }
  }
}
