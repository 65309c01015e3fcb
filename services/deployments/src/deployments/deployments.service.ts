import { createHash } from 'node:crypto';
import { Types } from 'mongoose';
import { conflict, notFound, type ListQuery, type Page } from '@platform/shared';
import type {
  Deployment,
  DeploymentWithLogs,
  DeploymentsRepository,
  ServiceRef,
} from './deployments.repository';
import type { IdempotencyRepository } from './idempotency.repository';
import { toTriggerResponse, type TriggerInput, type TriggerResponse } from './deployments.schemas';
import { assertTransitionAllowed, isFinal, type DeploymentStatus } from './status';
import type { StatusWatch } from './status-watch';

export interface DeploymentsServiceDeps {
  deployments: DeploymentsRepository;
  idempotencyKeys: IdempotencyRepository;
  /** Wakes a local pipeline worker so a new deployment starts at once. */
  onDeploymentCreated: () => void;
  /** Wakes the requests waiting for a deployment's status to change. */
  statusWatch: StatusWatch;
}

export interface TriggerResult {
  status: number;
  body: TriggerResponse;
}

export interface DeploymentListQuery extends ListQuery {
  status?: DeploymentStatus[];
}

const DEFAULT_PAGE_SIZE = 20;

/** Same key, same request: the target service and the normalised body. */
const requestHashOf = (target: ServiceRef, input: TriggerInput) =>
  createHash('sha256')
    .update(
      JSON.stringify([target.projectId, target.serviceId, input.commitHash, input.commitMessage]),
    )
    .digest('hex');

export class DeploymentsService {
  constructor(private readonly deps: DeploymentsServiceDeps) {}

  /** Newest first, `limit` (default 20) at a time, optionally only some statuses. */
  async listDeployments(ref: ServiceRef, query: DeploymentListQuery): Promise<Page<Deployment>> {
    return this.deps.deployments.listInService(
      ref,
      { limit: query.limit ?? DEFAULT_PAGE_SIZE, cursor: query.cursor },
      query.status,
    );
  }

  /**
   * The deployment as it is now; with `wait`, as soon as it is final or when the time is up
   * (`?wait=N`, contracts.md). A waiter reads the document, then sleeps until a status event of
   * the deployment (StatusWatch) and reads again: one read per change, no polling. It registers
   * before reading, so a change between the two is not missed.
   */
  async getDeployment(
    ref: ServiceRef,
    deploymentId: string,
    wait?: { ms: number; signal?: AbortSignal },
  ): Promise<DeploymentWithLogs> {
    const deadline = Date.now() + (wait?.ms ?? 0);
    for (;;) {
      const remainingMs = deadline - Date.now();
      const change =
        wait && remainingMs > 0
          ? this.deps.statusWatch.nextChange(deploymentId.toLowerCase(), remainingMs, wait.signal)
          : undefined;
      const deployment = await this.deps.deployments.findInService(ref, deploymentId);
      if (!deployment || !change || isFinal(deployment.status)) change?.cancel();
      if (!deployment) throw notFound('Deployment');
      if (!change || isFinal(deployment.status)) return deployment;
      // Changed: read again. Timed out: read once more, the answer is the state now.
      if ((await change.outcome) === 'aborted') return deployment;
    }
  }

  /**
   * Creates a BUILDING deployment. With an Idempotency-Key, a repeat of the same request within
   * 24 h answers what the first one did and creates nothing; another request under the key is
   * 409. The key fixes the deployment's id and time, so racing repeats create one deployment and
   * the answer is known, and stored, when the key is claimed.
   */
  async triggerDeployment(
    ref: ServiceRef,
    input: TriggerInput,
    idempotencyKey?: string,
  ): Promise<TriggerResult> {
    const id = new Types.ObjectId();
    const createdAt = new Date();
    const result = (deploymentId: Types.ObjectId, at: Date): TriggerResult => ({
      status: 201,
      body: toTriggerResponse({ ...ref, id: deploymentId.toHexString(), ...input, createdAt: at }),
    });
    if (!idempotencyKey) {
      await this.create(ref, input, id, createdAt);
      return result(id, createdAt);
    }
    const requestHash = requestHashOf(ref, input);
    const record = await this.deps.idempotencyKeys.claim(ref.accountId, idempotencyKey, {
      requestHash,
      deploymentId: id,
      createdAt,
      response: result(id, createdAt),
    });
    if (record.requestHash !== requestHash) {
      throw conflict('This Idempotency-Key was already used with a different request.');
    }
    // A repeat inserts nothing, unless the first try stopped between its key and its insert.
    await this.create(ref, input, record.deploymentId, record.createdAt);
    return record.response as TriggerResult;
  }

  /**
   * CANCELLED from BUILDING or DEPLOYING; 409 once final. The change is conditional on the
   * status read: when the pipeline moves it on at that very moment, the cancel follows it to
   * the new status (at most twice: the lifecycle has two steps). A worker running the deployment
   * notices at its next heartbeat.
   */
  async cancelDeployment(ref: ServiceRef, deploymentId: string): Promise<DeploymentWithLogs> {
    for (;;) {
      const current = await this.deps.deployments.find(ref, deploymentId);
      if (!current) throw notFound('Deployment');
      assertTransitionAllowed(current.status, 'CANCELLED');
      const [cancelled, logs] = await Promise.all([
        this.deps.deployments.changeStatus(current, 'CANCELLED'),
        this.deps.deployments.logsOf(ref, deploymentId),
      ]);
      if (cancelled) return { ...cancelled, logs };
    }
  }

  async removeProjectDeployments(accountId: string, projectId: string): Promise<number> {
    return this.deps.deployments.deleteByProject(accountId, projectId);
  }

  async removeServiceDeployments(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<number> {
    return this.deps.deployments.deleteByService(accountId, projectId, serviceId);
  }

  private async create(ref: ServiceRef, input: TriggerInput, id: Types.ObjectId, createdAt: Date) {
    await this.deps.deployments.insertBuilding({ ...ref, ...input, id, createdAt });
    this.deps.onDeploymentCreated();
  }
}
