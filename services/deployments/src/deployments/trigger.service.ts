import { createHash } from 'node:crypto';
import { Types } from 'mongoose';
import { conflict, notFound } from '@platform/shared';
import type { BuildRef } from '../builds/build-store';
import type { SourceSnapshot, SourceSnapshots } from '../source/snapshot';
import type { Deployment, ServiceRef } from './deployment';
import type { DeploymentsRepository } from './deployments.repository';
import type { TriggerInput } from './deployments.schemas';
import type { OwnedSource, TriggerRepository } from './trigger.repository';

export interface TriggerServiceDeps {
  triggers: TriggerRepository;
  /** The deployment a redeploy or rollback starts from. */
  deployments: DeploymentsRepository;
  /** The snapshot and kept build a rollback runs again. */
  snapshots: SourceSnapshots;
  /**
   * Whether a deployment's build is still kept: the build store, or with RUNTIME=kubernetes the
   * registry's app images (kubernetes.compose.ts keptImages).
   */
  builds: { find(ref: BuildRef): Promise<unknown> };
  /** Wakes a local pipeline worker so a new deployment starts at once. */
  onDeploymentCreated: () => void;
}

/** How a new deployment came to be: what an Idempotency-Key's request is. */
type Origin = { kind: 'trigger' } | { kind: 'redeploy' | 'rollback'; of: string };

/**
 * A deployment created (BUILDING), or, for a repeat of an Idempotency-Key's request, the one the
 * first request created (`replayed`).
 */
export interface Created {
  deployment: Pick<Deployment, 'id' | 'serviceId' | 'commitHash' | 'createdAt'>;
  replayed: boolean;
}

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

/** The ways a deployment is created: a trigger, a redeploy, a rollback. */
export class TriggerService {
  constructor(private readonly deps: TriggerServiceDeps) {}

  /**
   * The service the caller names, with its source and variables now: one call to the projects
   * service, which answers only the caller's service (404 otherwise), so it is the ownership
   * check as well.
   */
  ownedSource(requested: ServiceRef, requestId?: string): Promise<OwnedSource> {
    return this.deps.triggers.ownedSource(requested, requestId);
  }

  /** A BUILDING deployment of `input.commitHash` with the service's source now. */
  trigger(owned: OwnedSource, input: TriggerInput, idempotencyKey?: string): Promise<Created> {
    const snapshot = { ...owned.source, buildOf: null };
    return this.create(owned.ref, input, { kind: 'trigger' }, idempotencyKey, snapshot);
  }

  /** A new deployment of the same commit, built again with the source and variables of now. */
  async redeploy(
    owned: OwnedSource,
    deploymentId: string,
    idempotencyKey?: string,
  ): Promise<Created> {
    const target = await this.deps.deployments.find(owned.ref, deploymentId);
    if (!target) throw notFound('Deployment');
    const input = { commitHash: target.commitHash, commitMessage: target.commitMessage };
    const origin = { kind: 'redeploy', of: target.id } as const;
    const snapshot = { ...owned.source, buildOf: null };
    return this.create(owned.ref, input, origin, idempotencyKey, snapshot);
  }

  /**
   * A new deployment that runs the kept build of `deploymentId` again, with that deployment's
   * source and variables: nothing is built. 409 unless it reached DEPLOYED and its build is
   * still kept (the last 10 successful builds of a service are).
   */
  async rollback(ref: ServiceRef, deploymentId: string, idempotencyKey?: string): Promise<Created> {
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
    return this.create(ref, input, origin, idempotencyKey, { ...snapshot, buildOf });
  }

  /**
   * Creates a BUILDING deployment with its source snapshot, then cancels the service's older
   * ones still BUILDING (newest wins). With an Idempotency-Key, a repeat of the same request
   * within 24 h is the first one's deployment and creates nothing; another request under the key
   * is 409. The key fixes the deployment's id and time, so racing repeats create one deployment.
   */
  private async create(
    ref: ServiceRef,
    input: TriggerInput,
    origin: Origin,
    idempotencyKey: string | undefined,
    snapshot: SourceSnapshot,
  ): Promise<Created> {
    const fresh = { id: new Types.ObjectId(), createdAt: new Date() };
    const created = (id: Types.ObjectId, createdAt: Date, replayed: boolean): Created => ({
      deployment: { id: id.toHexString(), serviceId: ref.serviceId, ...input, createdAt },
      replayed,
    });
    if (!idempotencyKey) {
      await this.insert(ref, input, fresh.id, fresh.createdAt, snapshot);
      return created(fresh.id, fresh.createdAt, false);
    }
    const requestHash = requestHashOf(ref, input, origin);
    const { record, claimed } = await this.deps.triggers.claimKey(ref.accountId, idempotencyKey, {
      requestHash,
      deploymentId: fresh.id,
      createdAt: fresh.createdAt,
    });
    if (record.requestHash !== requestHash) {
      throw conflict('This Idempotency-Key was already used with a different request.');
    }
    // A repeat inserts nothing, unless the first try stopped between its key and its insert.
    await this.insert(ref, input, record.deploymentId, record.createdAt, snapshot);
    return created(record.deploymentId, record.createdAt, !claimed);
  }

  private async insert(
    ref: ServiceRef,
    input: TriggerInput,
    id: Types.ObjectId,
    createdAt: Date,
    snapshot: SourceSnapshot,
  ) {
    // The snapshot first: a deployment the pipeline can claim always has its source.
    await this.deps.triggers.saveSnapshot(ref, id.toHexString(), snapshot);
    await this.deps.triggers.insertBuilding({ ...ref, ...input, id, createdAt });
    await this.deps.triggers.supersedeOlder(ref);
    this.deps.onDeploymentCreated();
  }
}
