import { Types } from 'mongoose';
import { isDuplicateKeyError } from '@platform/shared';
import {
  NO_LEASE,
  type DeploymentDoc,
  type DeploymentModels,
  type LeaseDoc,
} from '../deployments/deployments.model';
import type { Deployment } from '../deployments/deployments.repository';
import { ACTIVE_STATUSES, type DeploymentStatus, type ResolvedStatus } from '../deployments/status';

/** A worker's hold on a deployment: one attempt at running it. */
export interface Lease {
  id: Types.ObjectId;
  deploymentId: string;
  attempt: number;
  owner: string;
  leaseUntil: Date;
  /** Earlier attempts whose worker vanished without giving the deployment back. */
  lostAttempts: number;
}

export interface ClaimCandidate {
  id: string;
  projectId: string;
  serviceId: string;
}

/**
 * The pipeline's reads and writes. Each document it updates has one writer at a time: the lease
 * is renewed only by the worker that inserted it, the deployment's logs and copies are written
 * only by the worker holding its current lease (see deployments.model.ts for why).
 */
export class PipelineRepository {
  constructor(private readonly models: DeploymentModels) {}

  /** Active deployments (by their status copy) whose lease looks free, oldest first. */
  async claimCandidates(now: Date, limit: number): Promise<ClaimCandidate[]> {
    const docs = await this.models.deployments
      .find(
        { status: { $in: ACTIVE_STATUSES }, leaseUntil: { $lt: now } },
        { projectId: 1, serviceId: 1 },
      )
      .sort({ createdAt: 1 })
      .limit(limit)
      .lean<DeploymentDoc[]>();
    return docs.map((d) => ({
      id: d._id.toHexString(),
      projectId: d.projectId,
      serviceId: d.serviceId,
    }));
  }

  /**
   * Takes the deployment for the next attempt, unless a worker still holds it. Two workers
   * claiming at once insert the same (deployment, attempt): one insert wins.
   */
  async claim(
    candidate: ClaimCandidate,
    owner: string,
    leaseMs: number,
    now = new Date(),
  ): Promise<Lease | null> {
    const earlier = await this.models.leases
      .find({ deploymentId: candidate.id })
      .sort({ attempt: -1 })
      .lean<LeaseDoc[]>();
    const latest = earlier[0];
    if (latest && !latest.released && latest.leaseUntil > now) return null;
    const lease = {
      _id: new Types.ObjectId(),
      deploymentId: candidate.id,
      projectId: candidate.projectId,
      serviceId: candidate.serviceId,
      attempt: (latest?.attempt ?? 0) + 1,
      owner,
      leaseUntil: new Date(now.getTime() + leaseMs),
      released: false,
    };
    try {
      await this.models.leases.create(lease);
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
    await this.models.deployments.updateOne(
      { _id: new Types.ObjectId(candidate.id) },
      { $set: { leaseOwner: owner, leaseUntil: lease.leaseUntil } },
    );
    return {
      id: lease._id,
      deploymentId: candidate.id,
      attempt: lease.attempt,
      owner,
      leaseUntil: lease.leaseUntil,
      lostAttempts: earlier.filter((l) => !l.released).length,
    };
  }

  /** Renews the lease; false when it is gone (its deployment was deleted). */
  async renew(lease: Lease, leaseUntil: Date): Promise<boolean> {
    const result = await this.models.leases.updateOne({ _id: lease.id }, { $set: { leaseUntil } });
    return result.matchedCount === 1;
  }

  /** Another worker took over: this lease expired and a later attempt was claimed. */
  async isTakenOver(lease: Lease): Promise<boolean> {
    return (
      (await this.models.leases.exists({
        deploymentId: lease.deploymentId,
        attempt: lease.attempt + 1,
      })) !== null
    );
  }

  /** The deployment has left `status` (cancelled through the API, most likely). */
  async hasLeft(deploymentId: string, status: DeploymentStatus): Promise<boolean> {
    return (await this.models.transitions.exists({ deploymentId, from: status })) !== null;
  }

  /**
   * Writes the holder's view into the deployment: logs, the lease copy, the status copy.
   * False when the deployment no longer exists.
   */
  async writeProgress(
    lease: Lease,
    progress: { logs?: string; status?: ResolvedStatus; leaseUntil?: Date },
  ): Promise<boolean> {
    const set: Partial<DeploymentDoc> = { leaseOwner: lease.owner };
    if (progress.logs !== undefined) set.logs = progress.logs;
    if (progress.status) Object.assign(set, progress.status);
    if (progress.leaseUntil) set.leaseUntil = progress.leaseUntil;
    const result = await this.models.deployments.updateOne(
      { _id: new Types.ObjectId(lease.deploymentId) },
      { $set: set },
    );
    return result.matchedCount === 1;
  }

  /**
   * Gives the deployment back with its final logs and status copy. The attempt does not count
   * as lost; after a shutdown the next worker claims it at once.
   */
  async release(lease: Lease, logs: string, status: ResolvedStatus): Promise<void> {
    await this.models.leases.updateOne(
      { _id: lease.id },
      { $set: { leaseUntil: NO_LEASE, released: true } },
    );
    await this.models.deployments.updateOne(
      { _id: new Types.ObjectId(lease.deploymentId) },
      { $set: { logs, ...status, leaseOwner: null, leaseUntil: NO_LEASE } },
    );
  }

  /** Corrects the status copy of a deployment that is no longer active (without a lease). */
  async repairStatusCopy(deployment: Deployment): Promise<void> {
    await this.models.deployments.updateOne(
      { _id: new Types.ObjectId(deployment.id) },
      {
        $set: {
          status: deployment.status,
          statusChangedAt: deployment.statusChangedAt,
          deployedAt: deployment.deployedAt,
        },
      },
    );
  }
}
