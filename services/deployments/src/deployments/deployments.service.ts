import { createHash } from 'node:crypto';
import { Types } from 'mongoose';
import {
  conflict,
  notFound,
  parseCursor,
  toPage,
  validationError,
  type CursorPosition,
  type ListQuery,
} from '@platform/shared';
import type { DeploymentsRepository, Deployment, ServiceRef } from './deployments.repository';
import type { IdempotencyRepository } from './idempotency.repository';
import type { AssertServiceOwned, Caller } from './projects.client';
import { toTriggerResponse, type TriggerInput, type TriggerResponse } from './deployments.schemas';

export interface DeploymentsServiceDeps {
  deployments: DeploymentsRepository;
  idempotencyKeys: IdempotencyRepository;
  assertServiceOwned: AssertServiceOwned;
  /** Wakes a local pipeline worker so a new deployment starts at once. */
  onDeploymentCreated: () => void;
}

export interface Target {
  projectId: string;
  serviceId: string;
}

export interface TriggerResult {
  status: number;
  body: TriggerResponse;
}

const DEFAULT_PAGE_SIZE = 20;
const CANCEL_RETRIES = 5;

/** Same key, same request: the target service and the normalised body. */
const requestHashOf = (target: ServiceRef, input: TriggerInput) =>
  createHash('sha256')
    .update(
      JSON.stringify([target.projectId, target.serviceId, input.commitHash, input.commitMessage]),
    )
    .digest('hex');

export class DeploymentsService {
  constructor(private readonly deps: DeploymentsServiceDeps) {}

  /**
   * Every request starts here: the service must exist, be in that project and belong to the
   * caller's account (asked of the projects service), else 404.
   */
  async authorizeService(caller: Caller, target: Target): Promise<ServiceRef> {
    await this.deps.assertServiceOwned(caller, target.projectId, target.serviceId);
    return {
      accountId: caller.accountId,
      projectId: target.projectId,
      serviceId: target.serviceId,
    };
  }

  /**
   * Newest first, `limit` (default 20) at a time, once the caller is known to own the service.
   * The page is read while the projects service answers that, so a list costs the slower of the
   * two rather than their sum (the check's tail is a good part of the list's): the reads are
   * _id lookups that keep only documents of the caller's own account and this service, and
   * nothing they find, nor any error they raise (a bad query or cursor), is answered before
   * ownership is confirmed: a stranger gets 404 whatever he asks.
   */
  async listDeployments(caller: Caller, target: Target, readQuery: () => ListQuery) {
    const ref: ServiceRef = { accountId: caller.accountId, ...target };
    const page = this.readPage(ref, readQuery);
    page.catch(() => undefined); // its outcome is reported below, after the check
    await this.authorizeService(caller, target);
    return page;
  }

  /**
   * The cursor carries the last item's place in the service's timeline (`seq`) besides its
   * createdAt and id.
   */
  private async readPage(ref: ServiceRef, readQuery: () => ListQuery) {
    const query = readQuery();
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const below = query.cursor
      ? await this.timelineSeqOf(ref, parseCursor(query.cursor))
      : undefined;
    const rows = await this.deps.deployments.listInService(ref, limit, below);
    return toPage(rows, limit, (d) => ({ createdAt: d.createdAt, id: d.id, seq: d.timelineSeq }));
  }

  async getDeployment(ref: ServiceRef, deploymentId: string): Promise<Deployment> {
    return this.findOrThrow(ref, deploymentId);
  }

  /**
   * Creates a BUILDING deployment. With an Idempotency-Key, a repeat of the same request within
   * 24 h answers what the first one did and creates nothing; another request under the key is
   * 409. The key fixes the deployment id, so racing repeats cannot create two.
   */
  async triggerDeployment(
    ref: ServiceRef,
    input: TriggerInput,
    idempotencyKey?: string,
  ): Promise<TriggerResult> {
    if (!idempotencyKey) {
      const created = await this.createDeployment(
        ref,
        input,
        new Types.ObjectId(),
        new Date(),
        false,
      );
      return { status: 201, body: toTriggerResponse(created) };
    }
    const requestHash = requestHashOf(ref, input);
    const record = await this.deps.idempotencyKeys.claim(
      ref.accountId,
      idempotencyKey,
      requestHash,
    );
    if (record.requestHash !== requestHash) {
      throw conflict('This Idempotency-Key was already used with a different request.');
    }
    if (record.response) return record.response as TriggerResult;
    const created = await this.createDeployment(
      ref,
      input,
      record.deploymentId,
      record.createdAt,
      true,
    );
    const result = { status: 201, body: toTriggerResponse(created) };
    await this.deps.idempotencyKeys.saveResponse(record.id, result);
    return result;
  }

  /**
   * CANCELLED from BUILDING or DEPLOYING; 409 once final. When the pipeline leaves the status at
   * the same moment, exactly one of the two is recorded; a cancel that lost is tried again on
   * the new status. A worker running the deployment notices at its next heartbeat.
   */
  async cancelDeployment(ref: ServiceRef, deploymentId: string): Promise<Deployment> {
    let current = await this.findOrThrow(ref, deploymentId);
    for (let attempt = 0; attempt < CANCEL_RETRIES; attempt++) {
      const cancelled = await this.deps.deployments.transition(current, 'CANCELLED');
      if (cancelled) {
        await this.deps.deployments.dequeue(cancelled.id);
        return cancelled;
      }
      current = await this.findOrThrow(ref, deploymentId);
    }
    throw conflict('The deployment kept changing while being cancelled: retry.');
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

  private async findOrThrow(ref: ServiceRef, deploymentId: string): Promise<Deployment> {
    const deployment = await this.deps.deployments.findInService(ref, deploymentId);
    if (!deployment) throw notFound('Deployment');
    return deployment;
  }

  /**
   * The place in the timeline after which a cursor's page starts. A cursor made before the
   * timeline existed names only a deployment: its place is read from it.
   */
  private async timelineSeqOf(ref: ServiceRef, position: CursorPosition): Promise<number> {
    if (position.seq !== undefined) return position.seq;
    const seq = await this.deps.deployments.timelineSeqOf(ref, position.id);
    if (seq === null) throw validationError([{ path: 'cursor', message: 'is not a valid cursor' }]);
    return seq;
  }

  /**
   * Inserts the deployment, or returns the one an earlier try of the same request inserted.
   * `mayExist`: the id comes from an idempotency key, so an earlier try may have inserted it;
   * looking first saves that repeat a timeline entry that could only be skipped.
   */
  private async createDeployment(
    ref: ServiceRef,
    input: TriggerInput,
    id: Types.ObjectId,
    createdAt: Date,
    mayExist: boolean,
  ) {
    let created = mayExist ? await this.deps.deployments.findById(id) : null;
    if (created) {
      await this.deps.deployments.completeCreation(created);
    } else {
      created = await this.deps.deployments.insertBuilding({ ...ref, ...input, id, createdAt });
      if (!created) {
        // A racing repeat of the same request inserted it first.
        created = await this.deps.deployments.findById(id);
        if (!created)
          throw new Error(`deployment ${id.toHexString()} vanished after a duplicate insert`);
        await this.deps.deployments.completeCreation(created);
      }
    }
    this.deps.onDeploymentCreated();
    return created;
  }
}
