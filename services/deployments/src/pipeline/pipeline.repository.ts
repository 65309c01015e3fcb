import { Types } from 'mongoose';
import { isDuplicateKeyError } from '@platform/shared';
import {
  leaseId,
  transitionId,
  type DeploymentDoc,
  type DeploymentModels,
  type LeaseDoc,
  type QueueEntryDoc,
} from '../deployments/deployments.model';
import type { DeploymentStatus } from '../deployments/status';

/** A worker's hold on a deployment: one attempt at running it. */
export interface Lease {
  id: string;
  deploymentId: string;
  attempt: number;
  owner: string;
  leaseUntil: Date;
  /** Earlier attempts whose worker vanished without giving the deployment back. */
  lostAttempts: number;
}

export interface QueueEntry {
  id: string;
  projectId: string;
  serviceId: string;
  createdAt: Date;
}

const EXPIRED = new Date(0);

/**
 * The pipeline's reads and writes, by _id wherever it repeats (FerretDB indexes nothing else).
 * Each document it updates has one writer: a lease only its owner renews, a deployment's logs
 * only the worker holding its current lease (see deployments.model.ts for why).
 */
export class PipelineRepository {
  constructor(private readonly models: DeploymentModels) {}

  /** Deployments still to run, oldest first. */
  async queued(limit: number, skip = 0): Promise<QueueEntry[]> {
    const docs = await this.models.queue
      .find({})
      .sort({ createdAt: 1, _id: 1 })
      .skip(skip)
      .limit(limit)
      .lean<QueueEntryDoc[]>();
    return docs.map((d) => ({
      id: d._id,
      projectId: d.projectId,
      serviceId: d.serviceId,
      createdAt: d.createdAt,
    }));
  }

  async dropFromQueue(deploymentId: string): Promise<void> {
    await this.models.queue.deleteOne({ _id: deploymentId });
  }

  /**
   * Takes the deployment for its next attempt, unless a worker still holds it. Two workers
   * claiming at once insert the same `<deployment>#<attempt>`: one insert wins.
   */
  async claim(
    entry: QueueEntry,
    owner: string,
    leaseMs: number,
    now = new Date(),
  ): Promise<Lease | null> {
    const earlier = await this.leasesOf(entry.id);
    const latest = earlier.at(-1);
    if (latest && !latest.released && latest.leaseUntil > now) return null;
    const attempt = (latest?.attempt ?? 0) + 1;
    const lease: LeaseDoc = {
      _id: leaseId(entry.id, attempt),
      deploymentId: entry.id,
      projectId: entry.projectId,
      serviceId: entry.serviceId,
      attempt,
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
    return {
      id: lease._id,
      deploymentId: entry.id,
      attempt,
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

  /** Another worker took over: this lease expired and the next attempt was claimed. */
  async isTakenOver(lease: Lease): Promise<boolean> {
    const next = leaseId(lease.deploymentId, lease.attempt + 1);
    return (await this.models.leases.exists({ _id: next })) !== null;
  }

  /** The deployment has left `status` (cancelled through the API, most likely). */
  async hasLeft(deploymentId: string, status: DeploymentStatus): Promise<boolean> {
    return (
      (await this.models.transitions.exists({ _id: transitionId(deploymentId, status) })) !== null
    );
  }

  /** False when the deployment no longer exists. */
  async writeLogs(lease: Lease, logs: string): Promise<boolean> {
    const result = await this.models.logs.updateOne(
      { _id: lease.deploymentId },
      { $set: { logs } },
    );
    if (result.matchedCount === 1) return true;
    // No logs document: the deployment is gone, or it predates them (an older version kept the
    // logs in the deployment document).
    const deployment = await this.models.deployments
      .findById(new Types.ObjectId(lease.deploymentId), { projectId: 1, serviceId: 1 })
      .lean<Pick<DeploymentDoc, 'projectId' | 'serviceId'>>();
    if (!deployment) return false;
    await this.models.logs
      .create({
        _id: lease.deploymentId,
        projectId: deployment.projectId,
        serviceId: deployment.serviceId,
        logs,
      })
      .catch((err: unknown) => {
        if (!isDuplicateKeyError(err)) throw err;
      });
    return true;
  }

  /**
   * Gives the deployment back with its final logs; the attempt does not count as lost. A
   * deployment left in a final status leaves the queue; one handed back on shutdown stays for
   * the next worker to claim at once.
   */
  async release(lease: Lease, logs: string, finished: boolean): Promise<void> {
    await this.writeLogs(lease, logs);
    await this.models.leases.updateOne(
      { _id: lease.id },
      { $set: { leaseUntil: EXPIRED, released: true } },
    );
    if (finished) await this.dropFromQueue(lease.deploymentId);
  }

  /** The deployment's leases in attempt order, read one by one by _id (there are few). */
  private async leasesOf(deploymentId: string): Promise<LeaseDoc[]> {
    const leases: LeaseDoc[] = [];
    for (let attempt = 1; ; attempt++) {
      const lease = await this.models.leases
        .findById(leaseId(deploymentId, attempt))
        .lean<LeaseDoc>();
      if (!lease) return leases;
      leases.push(lease);
    }
  }
}
