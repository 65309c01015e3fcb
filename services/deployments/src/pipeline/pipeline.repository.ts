import { Types, type Model } from 'mongoose';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { toDeployment, type Deployment } from '../deployments/deployments.repository';
import { ACTIVE_STATUSES, type DeploymentStatus } from '../deployments/status';

/** What a heartbeat learnt: still ours, or why not. */
export type LeaseCheck =
  | { held: true }
  | { held: false; reason: 'deleted' | 'lease-lost' }
  | { held: false; reason: 'status-changed'; status: DeploymentStatus };

/** The pipeline's writes: every one is conditional on holding the lease. */
export class PipelineRepository {
  constructor(private readonly model: Model<DeploymentDoc>) {}

  /**
   * Claims the oldest active deployment nobody holds, or whose holder stopped renewing: one
   * atomic write, so two workers never claim the same one.
   */
  async claimNext(owner: string, leaseMs: number, now = new Date()): Promise<Deployment | null> {
    const doc = await this.model
      .findOneAndUpdate(
        { status: { $in: ACTIVE_STATUSES }, leaseUntil: { $lt: now } },
        {
          $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) },
          $inc: { attempts: 1 },
        },
        { sort: { createdAt: 1 }, new: true },
      )
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /**
   * Renews the lease (and writes the logs when given) while the deployment is still in
   * `status` and leased to `owner`; otherwise says what happened instead. FerretDB's
   * findAndModify takes no projection, so the common case is an updateOne and the rare
   * one a read.
   */
  async heartbeat(
    id: string,
    owner: string,
    status: DeploymentStatus,
    leaseUntil: Date,
    logs?: string,
  ): Promise<LeaseCheck> {
    const _id = new Types.ObjectId(id);
    const set: Partial<DeploymentDoc> = { leaseUntil };
    if (logs !== undefined) set.logs = logs;
    const result = await this.model.updateOne({ _id, leaseOwner: owner, status }, { $set: set });
    if (result.matchedCount === 1) return { held: true };
    const now = await this.model.findById(_id, { status: 1, leaseOwner: 1 }).lean<DeploymentDoc>();
    if (!now) return { held: false, reason: 'deleted' };
    if (now.leaseOwner !== owner) return { held: false, reason: 'lease-lost' };
    return { held: false, reason: 'status-changed', status: now.status };
  }

  /**
   * Writes the final logs and gives the deployment up. `requeue` (shutting down) gives the
   * attempt back, so the next worker re-runs the step without counting it as a failure.
   */
  async release(id: string, owner: string, logs: string, requeue = false): Promise<boolean> {
    const result = await this.model.updateOne(
      { _id: new Types.ObjectId(id), leaseOwner: owner },
      {
        $set: { logs, leaseOwner: null, leaseUntil: NO_LEASE },
        ...(requeue ? { $inc: { attempts: -1 } } : {}),
      },
    );
    return result.matchedCount === 1;
  }
}
