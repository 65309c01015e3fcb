import { Types } from 'mongoose';
import {
  AccountLimits,
  describeWaiting,
  waitingFor,
  type AccountLimitSettings,
  type AccountUsage,
  type Waiting,
} from '../deployments/account-limits';
import type { DeploymentDoc } from '../deployments/deployments.model';
import { toDeployment } from '../deployments/deployments.repository';
import { LogStore } from '../deployments/log-store';
import type { LogAppended } from '../deployments/log-notices';
import { ACTIVE_STATUSES } from '../deployments/status';
import type { Models } from '../models';
import { AccountGate } from './account-gate';
import type { Claim } from './leases';

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

/** `a` was created before `b`: earlier, or at the same millisecond with a smaller id. */
const isCreatedBefore = (
  a: Pick<DeploymentDoc, '_id' | 'createdAt'>,
  b: Pick<DeploymentDoc, '_id' | 'createdAt'>,
) =>
  a.createdAt.getTime() < b.createdAt.getTime() ||
  (a.createdAt.getTime() === b.createdAt.getTime() && a._id.toHexString() < b._id.toHexString());

/**
 * Claiming work: which deployment a worker runs next, taken by a conditional update of the
 * deployment document itself (its `leaseOwner`, `leaseUntil` and `attempts`), so two workers
 * never hold one deployment.
 */
export class Claiming {
  private readonly logs: LogStore;
  private readonly limits: AccountLimits;
  private readonly gate: AccountGate;

  constructor(
    private readonly models: Models,
    logLimitBytes: number,
    accountLimits: AccountLimitSettings,
    logAppended?: LogAppended,
  ) {
    this.logs = new LogStore(models, logLimitBytes, logAppended);
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
   * Each account looked at costs two round trips, however many deployments wait in it.
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
      if (candidates.length === 0) continue;
      // The account's usage (read again after a claim that did not keep its place) and each
      // service's oldest deployment still to finish, read together: the candidates then cost no
      // query of their own.
      const [firstUsage, oldest] = await Promise.all([
        candidates.some((c) => c.status === 'BUILDING')
          ? this.limits.usage(accountId, undefined, now)
          : undefined,
        this.oldestActive(candidates.map((c) => c.serviceId)),
      ]);
      let usage: AccountUsage | undefined = firstUsage;
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
        if (oldest.get(candidate.serviceId) !== candidate._id.toHexString()) continue;
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
    // Stamped at the claim itself, not at the start of the pass that chose it: what the pass read
    // (an older deployment of the service finished, say) happened before this moment.
    const claimedAt = new Date();
    const leaseUntil = new Date(claimedAt.getTime() + leaseMs);
    const before = await this.models.deployments
      .findOneAndUpdate(
        { _id: id, status: { $in: [...ACTIVE_STATUSES] }, leaseUntil: { $lte: now } },
        {
          $set: { leaseOwner: owner, leaseUntil, claimedAt, waitingNoted: null },
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

  /**
   * Of each service, its oldest deployment still BUILDING or DEPLOYING (held or not), by
   * `createdBefore`'s order: the only one of the service that may run (an older one finishes
   * first). Index `{serviceId, status, createdAt, _id}`; a service has a few such deployments
   * at most (a new one cancels the older ones still building).
   */
  private async oldestActive(serviceIds: string[]): Promise<Map<string, string>> {
    const active = await this.models.deployments
      .find(
        { serviceId: { $in: [...new Set(serviceIds)] }, status: { $in: [...ACTIVE_STATUSES] } },
        { serviceId: 1, createdAt: 1 },
      )
      .lean<Pick<DeploymentDoc, '_id' | 'serviceId' | 'createdAt'>[]>();
    const oldest = new Map<string, Pick<DeploymentDoc, '_id' | 'createdAt'>>();
    for (const d of active) {
      const seen = oldest.get(d.serviceId);
      if (!seen || isCreatedBefore(d, seen)) oldest.set(d.serviceId, d);
    }
    return new Map([...oldest].map(([serviceId, d]) => [serviceId, d._id.toHexString()]));
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
