import { notFound, type ListQuery, type Page } from '@platform/shared';
import type { Deployment, DeploymentWithLogs, ServiceRef } from './deployment';
import type { DeploymentsRepository } from './deployments.repository';
import { waitingFor, type AccountLimits } from './account-limits';
import type { BuildStore } from '../builds/build-store';
import type { SourceSnapshots } from '../source/snapshot';
import { isFinal, transitionRefused, type DeploymentStatus } from './status';
import type { StatusWatch } from './status-watch';
import type { FollowerSink, LogFollowers } from './log-followers';

export interface DeploymentsServiceDeps {
  deployments: DeploymentsRepository;
  /** Wakes the requests waiting for a deployment's status to change. */
  statusWatch: StatusWatch;
  /** A deleted project's or service's source snapshots and kept builds go with it. */
  snapshots: SourceSnapshots;
  builds: BuildStore;
  /** The runtime apps run in, in a replica that runs the pipeline: a deleted service's apps stop. */
  runtime?: { stopService(serviceId: string): Promise<unknown> };
  /** The live logs' followers of this replica. */
  followers: LogFollowers;
  /** ACCOUNT_MAX_BUILDS and ACCOUNT_MAX_APPS: why a deployment waits. */
  limits: AccountLimits;
}

export interface DeploymentListQuery extends ListQuery {
  status?: DeploymentStatus[];
}

const DEFAULT_PAGE_SIZE = 20;

/**
 * The deployments once created (trigger.service.ts creates them): lists, reads that may wait,
 * cancels, logs, and their removal with their project or service.
 */
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
   * CANCELLED from BUILDING or DEPLOYING, its log saying `Deployment cancelled by its owner.`
   * (written first); 409 once final. The change is conditional on the status read: when the
   * pipeline moves it on at that very moment, the cancel follows it to the new status; when it
   * ends first, 409 (StatusWrites.cancel). A worker running the deployment notices at its next
   * heartbeat.
   */
  async cancelDeployment(ref: ServiceRef, deploymentId: string): Promise<DeploymentWithLogs> {
    const current = await this.deps.deployments.find(ref, deploymentId);
    if (!current) throw notFound('Deployment');
    const { cancelled, now, logs } = await this.deps.deployments.cancelByOwner(current);
    if (!cancelled) throw now ? transitionRefused(now.status, 'CANCELLED') : notFound('Deployment');
    return { ...cancelled, logs: logs ?? '' };
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

  /** The number of the log's last line (0 without one). */
  lastLogLine(deploymentId: string): Promise<number> {
    return this.deps.deployments.logs.lastLine(deploymentId);
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
}
