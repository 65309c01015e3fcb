import { Types } from 'mongoose';
import {
  AccountLimits,
  describeWaiting,
  waitingFor,
  type AccountLimitSettings,
  type AccountUsage,
  type Waiting,
} from '../deployments/account-limits';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { AccountGate } from './account-gate';
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

const CANDIDATE_FIELDS = {
  accountId: 1,
  projectId: 1,
  serviceId: 1,
  status: 1,
  createdAt: 1,
  attempts: 1,
  waitingNoted: 1,
} as const;
type Candidate = Pick<DeploymentDoc, '_id' | keyof typeof CANDIDATE_FIELDS>;

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

  private readonly limits: AccountLimits;
  private readonly gate: AccountGate;

  constructor(
    private readonly models: Models,
    logLimitBytes: number,
    accountLimits: AccountLimitSettings,
  ) {
    this.logs = new LogStore(models, logLimitBytes);
    this.limits = new AccountLimits(models, accountLimits);
    this.gate = new AccountGate(models, this.limits);
  }

  /**
   * Takes a deployment still to run that nobody holds (never claimed, handed back, or its
   * worker's lease expired), choosing fairly between accounts (contracts.md: no account can
   * starve another): first the accounts with the fewest deployments running, among those the
   * one served least recently (never, or longest ago), then that account's oldest deployment
   * whose service runs nothing older (one deployment of a service runs at a time: an older
   * DEPLOYING one finishes first) and that its account's limits let start (ACCOUNT_MAX_BUILDS,
   * ACCOUNT_MAX_APPS: account-limits.ts); the ones they hold back say so in their log, once.
   * The claim itself is one conditional update, so racing workers take different ones; a build
   * then keeps it only when its account's limits still hold with it counted (account-gate.ts).
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
        .find({ ...claimable, accountId }, CANDIDATE_FIELDS)
        .sort({ createdAt: 1 })
        .limit(CANDIDATES_PER_ACCOUNT)
        .lean<Candidate[]>();
      // Read once an account's build is met, and again after a claim that did not keep its place.
      let usage: AccountUsage | undefined;
      for (const candidate of candidates) {
        // A DEPLOYING one (its worker lost) holds no build and is already its service's app.
        if (candidate.status === 'BUILDING') {
          usage ??= await this.limits.usage(accountId, undefined, now);
          const waiting = waitingFor(candidate.serviceId, usage, this.limits.settings);
          if (waiting) {
            await this.noteWaiting(candidate, waiting, now);
            continue;
          }
        }
        const olderRunsFirst = await this.models.deployments.exists({
          serviceId: candidate.serviceId,
          status: { $in: [...ACTIVE_STATUSES] },
          ...createdBefore(candidate.createdAt, candidate._id),
        });
        if (olderRunsFirst) continue;
        const claim = await this.claim(candidate._id, owner, leaseMs, now);
        if (claim) return claim;
        usage = undefined;
      }
    }
    return null;
  }

  /**
   * One conditional update: the deployment is ours when it was still claimable. A build keeps it
   * only when its account's limits allow it (account-gate.ts); otherwise the claim is undone.
   */
  private async claim(
    id: Types.ObjectId,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<Claim | null> {
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const before = await this.models.deployments
      .findOneAndUpdate(
        { _id: id, status: { $in: [...ACTIVE_STATUSES] }, leaseUntil: { $lte: now } },
        {
          $set: { leaseOwner: owner, leaseUntil, claimedAt: now, waitingNoted: null },
          $inc: { attempts: 1 },
        },
      )
      .lean<DeploymentDoc>();
    if (!before) return null;
    const attempt = before.attempts + 1;
    const deployment = toDeployment({
      ...before,
      leaseOwner: owner,
      leaseUntil,
      attempts: attempt,
    });
    // First, so that a claim seen held has its log (an undone claim leaves one: it is made once).
    await this.openLogs(deployment.id, deployment);
    if (before.status === 'BUILDING' && !(await this.gate.keepsItsPlace(before))) {
      await this.undoClaim(before, owner, attempt);
      return null;
    }
    return {
      deployment,
      lease: {
        deploymentId: deployment.id,
        owner,
        attempt,
        leaseUntil,
        lostAttempts: attempt - 1 - before.handedBack,
      },
    };
  }

  /** Puts back what the claim changed, unless something else changed it since (a cancel). */
  private async undoClaim(before: DeploymentDoc, owner: string, attempt: number): Promise<void> {
    await this.models.deployments.updateOne(
      { _id: before._id, leaseOwner: owner, attempts: attempt },
      {
        $set: {
          leaseOwner: before.leaseOwner,
          leaseUntil: before.leaseUntil,
          claimedAt: before.claimedAt,
          waitingNoted: before.waitingNoted ?? null,
        },
        $inc: { attempts: -1 },
      },
    );
  }

  /**
   * Says in the deployment's log why it waits, once a reason (`waitingNoted`): written only while
   * nobody holds it, before any claim has written (its head's `attempt`).
   */
  private async noteWaiting(candidate: Candidate, waiting: Waiting, now: Date): Promise<void> {
    if (candidate.waitingNoted === waiting.reason) return;
    const noted = await this.models.deployments.updateOne(
      {
        _id: candidate._id,
        status: 'BUILDING',
        leaseUntil: { $lte: now },
        waitingNoted: { $ne: waiting.reason },
      },
      { $set: { waitingNoted: waiting.reason } },
    );
    if (noted.modifiedCount !== 1) return;
    const id = candidate._id.toHexString();
    await this.openLogs(id, candidate);
    await this.logs.append(id, `==> waiting: ${describeWaiting(waiting)}\n`, {
      where: { attempt: { $lte: candidate.attempts } },
    });
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
   * The deployment's log, made on its first claim (or when it is first said to wait). A cascade
   * that removed the deployment meanwhile has its log removed here too, so none outlives its
   * deployment.
   */
  private async openLogs(
    deploymentId: string,
    owner: Pick<DeploymentDoc, 'accountId' | 'projectId' | 'serviceId'>,
  ): Promise<void> {
    const { accountId, projectId, serviceId } = owner;
    await this.logs.create({ deploymentId, accountId, projectId, serviceId });
    if (!(await this.models.deployments.exists({ _id: new Types.ObjectId(deploymentId) }))) {
      await this.models.logs.deleteOne({ _id: deploymentId });
    }
  }
}
