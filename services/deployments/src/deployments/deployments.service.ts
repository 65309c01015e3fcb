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
import { waitingFor, type AccountLimits } from './account-limits';
import type { BuildStore } from '../builds/build-store';
import type { RuntimeClient } from '../runtime/local/client';
import type { SourceClient, SourceSnapshot, SourceSnapshots } from '../source/snapshot';
import { toTriggerResponse, type TriggerInput, type TriggerResponse } from './deployments.schemas';
import { assertTransitionAllowed, isFinal, type DeploymentStatus } from './status';
import type { StatusWatch } from './status-watch';
import type { FollowerSink, LogFollowers } from './log-followers';

export interface DeploymentsServiceDeps {
  deployments: DeploymentsRepository;
  idempotencyKeys: IdempotencyRepository;
  /** Wakes a local pipeline worker so a new deployment starts at once. */
  onDeploymentCreated: () => void;
  /** Wakes the requests waiting for a deployment's status to change. */
  statusWatch: StatusWatch;
  /** The projects service: a service's source and variables at the trigger. */
  sources: SourceClient;
  snapshots: SourceSnapshots;
  /** The kept builds (a rollback needs its target's). */
  builds: BuildStore;
  /** The local runtime, in a replica that runs the pipeline: a deleted service's apps stop. */
  runtime?: RuntimeClient;
  /** The live logs' followers of this replica. */
  followers: LogFollowers;
  /** ACCOUNT_MAX_BUILDS and ACCOUNT_MAX_APPS: why a deployment waits. */
  limits: AccountLimits;
}

/** How a new deployment came to be: what an Idempotency-Key's request is. */
type Origin = { kind: 'trigger' } | { kind: 'redeploy' | 'rollback'; of: string };

export interface TriggerResult {
  status: number;
  body: TriggerResponse;
}

export interface DeploymentListQuery extends ListQuery {
  status?: DeploymentStatus[];
}

const DEFAULT_PAGE_SIZE = 20;

/** Same key, same request: the operation, the target service and the normalised body. */
const requestHashOf = (target: ServiceRef, input: TriggerInput, origin: Origin) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        target.projectId,
        target.serviceId,
        input.commitHash,
        input.commitMessage,
        ...(origin.kind === 'trigger' ? [] : [origin.kind, origin.of]),
      ]),
    )
    .digest('hex');

export class DeploymentsService {
  constructor(private readonly deps: DeploymentsServiceDeps) {}

  /** Newest first, `limit` (default 20) at a time, optionally only some statuses. */
  async listDeployments(ref: ServiceRef, query: DeploymentListQuery): Promise<Page<Deployment>> {
    const page = await this.deps.deployments.listInService(
      ref,
      { limit: query.limit ?? DEFAULT_PAGE_SIZE, cursor: query.cursor },
      query.status,
    );
    return { ...page, items: await this.withWaiting(ref.accountId, page.items) };
  }

  /**
   * The deployments, those still to build that nobody runs with why they wait when their
   * account's limits hold them back (`waiting`): the pipeline's own test, on the account's usage
   * now (one read for all of them: they are one account's).
   */
  private async withWaiting<T extends Deployment>(accountId: string, items: T[]): Promise<T[]> {
    const now = new Date();
    const idle = (d: Deployment) => d.status === 'BUILDING' && d.leaseUntil <= now;
    if (!items.some(idle)) return items;
    const usage = await this.deps.limits.usage(accountId, undefined, now);
    return items.map((d) => {
      const waiting = idle(d) && waitingFor(d.serviceId, usage, this.deps.limits.settings);
      return waiting ? { ...d, waiting } : d;
    });
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
      if (!change || isFinal(deployment.status) || (await change.outcome) === 'aborted') {
        const [answer] = await this.withWaiting(ref.accountId, [deployment]);
        return answer!;
      }
      // Changed: read again. Timed out: read once more, the answer is the state now.
    }
  }

  /**
   * Creates a BUILDING deployment of `input.commitHash`, with the service's source and
   * variables as they are now (asked of the projects service). See `create` for the rest.
   */
  async triggerDeployment(
    ref: ServiceRef,
    input: TriggerInput,
    idempotencyKey?: string,
    requestId?: string,
  ): Promise<TriggerResult> {
    return this.create(ref, input, { kind: 'trigger' }, idempotencyKey, async () => ({
      ...(await this.deps.sources.sourceOf(ref, requestId)),
      buildOf: null,
    }));
  }

  /** A new deployment of the same commit, built again with the source and variables of now. */
  async redeploy(
    ref: ServiceRef,
    deploymentId: string,
    idempotencyKey?: string,
    requestId?: string,
  ): Promise<TriggerResult> {
    const target = await this.deps.deployments.find(ref, deploymentId);
    if (!target) throw notFound('Deployment');
    const input = { commitHash: target.commitHash, commitMessage: target.commitMessage };
    const origin = { kind: 'redeploy', of: target.id } as const;
    return this.create(ref, input, origin, idempotencyKey, async () => ({
      ...(await this.deps.sources.sourceOf(ref, requestId)),
      buildOf: null,
    }));
  }

  /**
   * A new deployment that runs the kept build of `deploymentId` again, with that deployment's
   * source and variables: nothing is built. 409 unless it reached DEPLOYED and its build is
   * still kept (the last 10 successful builds of a service are).
   */
  async rollback(
    ref: ServiceRef,
    deploymentId: string,
    idempotencyKey?: string,
  ): Promise<TriggerResult> {
    const target = await this.deps.deployments.find(ref, deploymentId);
    if (!target) throw notFound('Deployment');
    if (!target.deployedAt) {
      throw conflict('Only a deployment that reached DEPLOYED can be rolled back to.');
    }
    const snapshot = await this.deps.snapshots.find(target.id);
    // A rollback to a rollback runs the build that one ran.
    const buildOf = snapshot?.buildOf ?? target.id;
    const kept =
      snapshot &&
      (await this.deps.builds.find({
        projectId: ref.projectId,
        serviceId: ref.serviceId,
        deploymentId: buildOf,
      }));
    if (!snapshot || !kept) {
      throw conflict(
        `The build of deployment ${target.id} is no longer kept (the last 10 successful builds of a service are).`,
      );
    }
    const input = { commitHash: target.commitHash, commitMessage: target.commitMessage };
    const origin = { kind: 'rollback', of: target.id } as const;
    return this.create(ref, input, origin, idempotencyKey, async () => ({ ...snapshot, buildOf }));
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

  /** The deployment (404 unless it is of this service). */
  async findDeployment(ref: ServiceRef, deploymentId: string): Promise<Deployment> {
    const deployment = await this.deps.deployments.find(ref, deploymentId);
    if (!deployment) throw notFound('Deployment');
    return deployment;
  }

  /** The deployment's whole log so far. */
  logsOf(ref: ServiceRef, deploymentId: string): Promise<string> {
    return this.deps.deployments.logsOf(ref, deploymentId);
  }

  /** Follows the log after line `after` (see LogFollowers); resolves with the close. */
  followLogs(deploymentId: string, after: number, sink: FollowerSink): Promise<() => void> {
    return this.deps.followers.follow(deploymentId, after, sink);
  }

  /** A deployment of the account, whatever its service (the internal check of a status event). */
  async findOwned(accountId: string, deploymentId: string): Promise<Deployment | null> {
    return this.deps.deployments.findOfAccount(accountId, deploymentId);
  }

  /** A deleted project: its deployments, their sources and builds, and its apps. */
  async removeProjectDeployments(accountId: string, projectId: string): Promise<number> {
    const services = await this.deps.deployments.serviceIdsOf(accountId, projectId);
    await Promise.all(services.map((serviceId) => this.deps.runtime?.stopService(serviceId)));
    const removed = await this.deps.deployments.deleteByProject(accountId, projectId);
    await this.deps.snapshots.deleteByProject(accountId, projectId);
    if (services.length > 0) await this.deps.builds.removeProject(projectId);
    return removed;
  }

  /** A deleted service: its deployments, their sources and builds, and its app. */
  async removeServiceDeployments(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<number> {
    const owned = await this.deps.deployments.serviceIdsOf(accountId, projectId);
    if (owned.includes(serviceId)) await this.deps.runtime?.stopService(serviceId);
    const removed = await this.deps.deployments.deleteByService(accountId, projectId, serviceId);
    await this.deps.snapshots.deleteByService(accountId, projectId, serviceId);
    if (owned.includes(serviceId)) await this.deps.builds.removeService({ projectId, serviceId });
    return removed;
  }

  /**
   * Creates a BUILDING deployment with its source snapshot (made by `snapshot`), then cancels the
   * service's older ones still BUILDING (newest wins). With an Idempotency-Key, a repeat of the
   * same request within 24 h answers what the first one did and creates nothing; another
   * request under the key is 409. The key fixes the deployment's id and time, so racing repeats
   * create one deployment and the answer is known, and stored, when the key is claimed.
   */
  private async create(
    ref: ServiceRef,
    input: TriggerInput,
    origin: Origin,
    idempotencyKey: string | undefined,
    snapshot: () => Promise<SourceSnapshot>,
  ): Promise<TriggerResult> {
    const id = new Types.ObjectId();
    const createdAt = new Date();
    const result = (deploymentId: Types.ObjectId, at: Date): TriggerResult => ({
      status: 201,
      body: toTriggerResponse({ ...ref, id: deploymentId.toHexString(), ...input, createdAt: at }),
    });
    if (!idempotencyKey) {
      await this.insert(ref, input, id, createdAt, await snapshot());
      return result(id, createdAt);
    }
    const requestHash = requestHashOf(ref, input, origin);
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
    await this.insert(ref, input, record.deploymentId, record.createdAt, await snapshot());
    return record.response as TriggerResult;
  }

  private async insert(
    ref: ServiceRef,
    input: TriggerInput,
    id: Types.ObjectId,
    createdAt: Date,
    snapshot: SourceSnapshot,
  ) {
    // The snapshot first: a deployment the pipeline can claim always has its source.
    await this.deps.snapshots.save(ref, id.toHexString(), snapshot);
    await this.deps.deployments.insertBuilding({ ...ref, ...input, id, createdAt });
    await this.deps.deployments.supersedeOlder(ref);
    this.deps.onDeploymentCreated();
  }
}
