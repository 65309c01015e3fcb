import { Types } from 'mongoose';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { toDeployment, type Deployment } from '../deployments/deployments.repository';
import { LogStore } from '../deployments/log-store';
import type { LogAppended } from '../deployments/log-notices';
import type { DeploymentStatus } from '../deployments/status';
import type { Models } from '../models';

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
 * A claimed deployment's lease (claiming.ts takes it): renewed, checked and given back by
 * conditional updates of the deployment document, and the run's log written under it. Status
 * changes go through the deployments repository with the lease as a further condition.
 */
export class Leases {
  private readonly logs: LogStore;

  constructor(
    private readonly models: Models,
    logLimitBytes: number,
    logAppended?: LogAppended,
  ) {
    this.logs = new LogStore(models, logLimitBytes, logAppended);
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
}
