import {
  findPage,
  mapPage,
  parseObjectId,
  type OutboxWriter,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { Models } from '../models';
import type { DeploymentDoc } from './deployments.model';
import { LogStore } from './log-store';
import type { LogAppended } from './log-notices';
import { assertTransitionAllowed, isFinal, type DeploymentStatus } from './status';
import { StatusWrites, type CancelOutcome } from './status-writes';
import {
  LIST_FIELDS,
  inService,
  toDeployment,
  type Deployment,
  type DeploymentWithLogs,
  type ServiceRef,
} from './deployment';

// Where the pipeline has always found them (deployment.ts holds them now).
export {
  createdBefore,
  statusEvent,
  toDeployment,
  type Deployment,
  type DeploymentWithLogs,
  type ServiceRef,
} from './deployment';

/** The line of a deployment its owner cancelled. */
export const OWNER_CANCEL_LINE = 'Deployment cancelled by its owner.';

/**
 * The deployments as the API and the pipeline read them, their status changes after creation
 * (the trigger's writes are trigger.repository.ts's), and their removal with their project or
 * service.
 */
export class DeploymentsRepository {
  readonly logs: LogStore;
  private readonly writes: StatusWrites;

  /**
   * Status events are written through `outbox` (the relay publishes them at once); every log
   * append is told to `logAppended` (LogNotices).
   */
  constructor(
    private readonly models: Models,
    outbox: OutboxWriter,
    logLimitBytes?: number,
    logAppended?: LogAppended,
  ) {
    this.logs = new LogStore(models, logLimitBytes, logAppended);
    this.writes = new StatusWrites(models, outbox, this.logs);
  }

  /**
   * A deployment with its logs, only when it belongs to this service of this project and account.
   * The log's chunks are read after the deployment: a CANCELLED or FAILED one had the line saying
   * why written before its status changed, so they have it. Its head is read beside the
   * deployment, and again when there was none and the deployment has ended (the head of a log
   * nobody had written may come with the reason).
   */
  async findInService(ref: ServiceRef, id: string): Promise<DeploymentWithLogs | null> {
    const _id = parseObjectId(id, 'Deployment');
    const logId = _id.toHexString();
    const [doc, head] = await Promise.all([
      this.models.deployments.findOne(inService(ref, _id), LIST_FIELDS).lean<DeploymentDoc>(),
      this.logs.head(logId, ref.accountId),
    ]);
    if (!doc) return null;
    const after = head ?? (isFinal(doc.status) ? await this.logs.head(logId, ref.accountId) : null);
    return { ...toDeployment(doc), logs: await this.logs.textOf(after) };
  }

  /** The service's deployments newest first, `limit` at a time, optionally of some statuses. */
  async listInService(
    ref: ServiceRef,
    page: PageRequest,
    statuses?: readonly DeploymentStatus[],
  ): Promise<Page<Deployment>> {
    return mapPage(
      await findPage(this.models.deployments, this.listFilter(ref, statuses), page, LIST_FIELDS),
      toDeployment,
    );
  }

  /** A list's filter (exposed so the conformance suite can check the index that serves it). */
  listFilter(ref: ServiceRef, statuses?: readonly DeploymentStatus[]) {
    return {
      serviceId: ref.serviceId,
      accountId: ref.accountId,
      projectId: ref.projectId,
      ...(statuses && { status: { $in: [...statuses] } }),
    };
  }

  /** The deployment alone, when it belongs to the account (null for another's; 404 if malformed). */
  async findOfAccount(accountId: string, id: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne({ _id: parseObjectId(id, 'Deployment'), accountId }, LIST_FIELDS)
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** The deployment alone (no logs), when it belongs to this service. */
  async find(ref: ServiceRef, id: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne(inService(ref, parseObjectId(id, 'Deployment')), LIST_FIELDS)
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  async logsOf(ref: ServiceRef, id: string): Promise<string> {
    // Keyed by the id as the pipeline writes it (lower case), whatever case the URL used.
    return this.logs.read(parseObjectId(id, 'Deployment').toHexString(), ref.accountId);
  }

  /**
   * Moves `current` to `to` with its event, if it is still in the status it was read in (and,
   * for the pipeline, still held by `lease`): one conditional update, so of racing changes
   * exactly one is written. Null when another change came first, or the deployment is gone.
   */
  async changeStatus(
    current: Deployment,
    to: DeploymentStatus,
    lease?: { owner: string; attempt: number },
  ): Promise<Deployment | null> {
    assertTransitionAllowed(current.status, to);
    return this.writes.change(current, to, lease);
  }

  /** Its owner's cancel, the line saying so in its log first (StatusWrites.cancel), with its log. */
  async cancelByOwner(current: Deployment): Promise<CancelOutcome> {
    assertTransitionAllowed(current.status, 'CANCELLED');
    return this.writes.cancel(
      current,
      { line: OWNER_CANCEL_LINE },
      { followSteps: true, withLogs: true },
    );
  }

  /**
   * The service's newest DEPLOYED deployment: the one its URL serves (newest wins, in the
   * runtime too). Read from the index `{serviceId, status, createdAt, _id}` in its order.
   */
  async latestDeployed(serviceId: string): Promise<Deployment | null> {
    const doc = await this.models.deployments
      .findOne({ serviceId, status: 'DEPLOYED' }, LIST_FIELDS)
      .sort({ createdAt: -1, _id: -1 })
      .lean<DeploymentDoc>();
    return doc ? toDeployment(doc) : null;
  }

  /** The services of a project that have deployments here. */
  async serviceIdsOf(accountId: string, projectId: string): Promise<string[]> {
    return (await this.models.deployments.distinct('serviceId', { accountId, projectId })).map(
      String,
    );
  }

  async deleteByProject(accountId: string, projectId: string): Promise<number> {
    const result = await this.models.deployments.deleteMany({ accountId, projectId });
    await this.logs.deleteOf({ accountId, projectId });
    return result.deletedCount;
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<number> {
    const result = await this.models.deployments.deleteMany({ serviceId, accountId, projectId });
    await this.logs.deleteOf({ accountId, projectId, serviceId });
    return result.deletedCount;
  }
}
