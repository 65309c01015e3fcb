import { parseObjectId, transition, type OutboxWriter } from '@platform/shared';
import type { Models } from '../models';
import type { DeploymentDoc } from './deployments.model';
import type { LogStore } from './log-store';
import { canTransition, type DeploymentStatus } from './status';
import { LIST_FIELDS, inService, statusChange, toDeployment, type Deployment } from './deployment';

/** How long a trigger superseding a deployment has it to itself (claimSupersede). */
const SUPERSEDE_CLAIM_MS = 30_000;

/**
 * What a cancel came to: the deployment CANCELLED (with its log when asked: `withLogs`), or as
 * it was instead (null: it is gone).
 */
export type CancelOutcome =
  | { cancelled: Deployment; now?: undefined; logs?: string }
  | { cancelled: null; now: Deployment | null; logs?: undefined };

/** Why a deployment is cancelled: its log's line, and the deployment's `cancelReason` if any. */
export interface CancelReason {
  line: string;
  cancelReason?: string;
}

/**
 * A deployment's status changes after its creation, for the deployments and the trigger
 * repositories alike: each one conditional update of the deployment with its event.
 */
export class StatusWrites {
  /** Events are written through `outbox`; a cancel's reason through `logs`. */
  constructor(
    private readonly models: Models,
    private readonly outbox: OutboxWriter,
    private readonly logs: LogStore,
  ) {}

  /**
   * Moves `current` to `to` with its event, if it is still in the status it was read in (and,
   * for the pipeline, still held by `lease`): one conditional update, so of racing changes
   * exactly one is written. Null when another change came first, or the deployment is gone.
   * The pipeline writes a FAILED deployment's reason into its log before this (deployment-run.ts).
   */
  async change(
    current: Deployment,
    to: DeploymentStatus,
    lease?: { owner: string; attempt: number },
    cancelReason?: string,
  ): Promise<Deployment | null> {
    const id = parseObjectId(current.id, 'Deployment');
    const doc = await this.outbox.write(this.models.deployments, id, () =>
      transition(this.models.deployments, {
        where: {
          ...inService(current, id),
          ...(lease && { leaseOwner: lease.owner, attempts: lease.attempt }),
        },
        ...statusChange(current, to, new Date(), cancelReason),
      }),
    );
    return doc ? toDeployment(doc) : null;
  }

  /**
   * Cancels `current` from outside its run (its owner, newest wins), the line saying why in its
   * log first: whoever reads it CANCELLED finds the reason there (the two are documents of their
   * own, and the line is in before the status can be seen). A worker running it stops at its
   * next heartbeat and says so after. With `followSteps`, a change of the pipeline that comes
   * first (BUILDING → DEPLOYING) is followed, and the cancel made from there (at most twice: the
   * lifecycle has two steps). When the cancel does not apply after all (the deployment ended
   * first, or moved on when not followed), the log says so after the line, unless another cancel
   * won (racing triggers may each leave their `superseded by`, every one of them true); a
   * deployment deleted meanwhile has its log removed, the line with it.
   */
  async cancel(
    current: Deployment,
    reason: CancelReason,
    { followSteps, withLogs = false }: { followSteps: boolean; withLogs?: boolean },
  ): Promise<CancelOutcome> {
    const { accountId, projectId, serviceId } = current;
    if (!followSteps && !(await this.claimSupersede(current))) {
      return { cancelled: null, now: await this.reread(current) };
    }
    // Its head made too when nobody has written it yet: the status change below, conditional on
    // the deployment, or the removal when it is gone, keeps a cascade from missing it.
    const opening = { accountId, projectId, serviceId };
    if (!(await this.logs.append(current.id, `${reason.line}\n`, { opening }))) {
      return { cancelled: null, now: null };
    }
    // The log as it is with the line, read while the status changes.
    const logs = withLogs ? this.logs.read(current.id) : undefined;
    logs?.catch(() => undefined);
    let now = current;
    for (;;) {
      const cancelled = await this.change(now, 'CANCELLED', undefined, reason.cancelReason);
      if (cancelled) return { cancelled, ...(logs && { logs: await logs }) };
      const found = await this.reread(current);
      if (!found) {
        await this.logs.remove(current.id);
        return { cancelled: null, now: null };
      }
      now = found;
      if (!followSteps || !canTransition(now.status, 'CANCELLED')) break;
    }
    // Another cancel won (racing triggers, or its owner): the line is true all the same.
    if (now.status !== 'CANCELLED') {
      await this.logs.append(
        current.id,
        `The cancel did not apply: the deployment was ${now.status} by then.\n`,
      );
    }
    return { cancelled: null, now };
  }

  /**
   * Newest wins: of racing triggers superseding `current`, the one that has it writes the line
   * and makes the change; the others leave it (a burst of n triggers would otherwise write n
   * lines into each older log). A claim lapses after SUPERSEDE_CLAIM_MS, so a trigger that
   * stopped between the two writes leaves the deployment to the next one.
   */
  private async claimSupersede(current: Deployment): Promise<boolean> {
    const id = parseObjectId(current.id, 'Deployment');
    const now = new Date();
    const { modifiedCount } = await this.models.deployments.updateOne(
      {
        ...inService(current, id),
        status: current.status,
        $or: [{ supersedeClaimUntil: null }, { supersedeClaimUntil: { $lte: now } }],
      },
      { $set: { supersedeClaimUntil: new Date(now.getTime() + SUPERSEDE_CLAIM_MS) } },
    );
    return modifiedCount === 1;
  }

  private async reread(current: Deployment): Promise<Deployment | null> {
    const id = parseObjectId(current.id, 'Deployment');
    const doc = await this.models.deployments
      .findOne(inService(current, id), LIST_FIELDS)
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }
}
