import { Schema, type Connection, type Model, type Types } from 'mongoose';
import { DEPLOYMENT_STATUSES, outboxFields, type OutboxEntry } from '@platform/shared';
import type { DeploymentStatus } from './status';

/*
 * FerretDB (1.24, SQLite) runs an update as "find, then replace the document": two concurrent
 * updates of one document both match their filter and the later write silently undoes the
 * earlier one. Only inserts on a unique index are atomic. So no document here is ever updated by
 * two parties at once:
 * - a status change is an insert-only transition, unique per (deployment, from-status): of a
 *   cancel and the pipeline leaving BUILDING, exactly one insert succeeds. It carries its event
 *   in its outbox, and afterwards only the outbox relay writes to it;
 * - a worker's claim is an insert-only lease, unique per (deployment, attempt), renewed only by
 *   the worker that inserted it;
 * - the deployment document is written by the API once (insert) and then only by the worker
 *   holding its lease (logs) or, with a claim, repairing its status copy.
 */

export interface DeploymentDoc {
  _id: Types.ObjectId;
  accountId: string;
  projectId: string;
  serviceId: string;
  commitHash: string;
  commitMessage: string;
  logs: string;
  createdAt: Date;
  /** A copy of the status the transitions give, kept by the pipeline for its claim query. */
  status: DeploymentStatus;
  statusChangedAt: Date;
  deployedAt: Date | null;
  /** Copies of the current lease, for the claim query; the lease documents are the truth. */
  leaseOwner: string | null;
  leaseUntil: Date;
}

/** An unclaimed deployment: any worker may take it. */
export const NO_LEASE = new Date(0);

const deploymentSchema = new Schema<DeploymentDoc>(
  {
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    commitHash: { type: String, required: true },
    commitMessage: { type: String, default: '' },
    logs: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    status: { type: String, enum: DEPLOYMENT_STATUSES, required: true },
    statusChangedAt: { type: Date, required: true },
    deployedAt: { type: Date, default: null },
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Date, default: NO_LEASE },
  },
  { collection: 'deployments', versionKey: false },
);
// A service's deployments, newest first (the list and its cursor).
deploymentSchema.index({ serviceId: 1, createdAt: -1, _id: -1 });
// The pipeline's claim: active deployments whose lease is free or expired.
deploymentSchema.index({ status: 1, leaseUntil: 1 });
// project.deleted removes a project's deployments.
deploymentSchema.index({ projectId: 1 });

export interface TransitionDoc {
  _id: Types.ObjectId;
  deploymentId: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  /** null for the deployment's creation (its first status, BUILDING). */
  from: DeploymentStatus | null;
  to: DeploymentStatus;
  at: Date;
  /** The pipeline attempt that made it; null when the API did. */
  attempt: number | null;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

const transitionSchema = new Schema<TransitionDoc>(
  {
    deploymentId: { type: String, required: true },
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    from: { type: String, enum: DEPLOYMENT_STATUSES, default: null },
    to: { type: String, enum: DEPLOYMENT_STATUSES, required: true },
    at: { type: Date, required: true },
    attempt: { type: Number, default: null },
  },
  { collection: 'deployment_transitions', versionKey: false },
);
transitionSchema.add(outboxFields);
// A status is left at most once: the insert that wins this index is the change that happened.
transitionSchema.index({ deploymentId: 1, from: 1 }, { unique: true });
transitionSchema.index({ projectId: 1, serviceId: 1 });

export interface LeaseDoc {
  _id: Types.ObjectId;
  deploymentId: string;
  projectId: string;
  serviceId: string;
  attempt: number;
  owner: string;
  leaseUntil: Date;
  /** Given back in good order (finished, stopped, shutting down), not lost with its worker. */
  released: boolean;
}

const leaseSchema = new Schema<LeaseDoc>(
  {
    deploymentId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    attempt: { type: Number, required: true },
    owner: { type: String, required: true },
    leaseUntil: { type: Date, required: true },
    released: { type: Boolean, default: false },
  },
  { collection: 'deployment_leases', versionKey: false },
);
// One worker per attempt: the insert that wins this index holds the deployment.
leaseSchema.index({ deploymentId: 1, attempt: -1 }, { unique: true });
leaseSchema.index({ projectId: 1, serviceId: 1 });

export interface IdempotencyKeyDoc {
  /** `${accountId}:${key}`: keys are per account. */
  _id: string;
  requestHash: string;
  /** Chosen with the key, so every repeat of the request can only ever create this one. */
  deploymentId: Types.ObjectId;
  createdAt: Date;
  response: { status: number; body: unknown } | null;
}

const idempotencyKeySchema = new Schema<IdempotencyKeyDoc>(
  {
    _id: { type: String, required: true },
    requestHash: { type: String, required: true },
    deploymentId: { type: Schema.Types.ObjectId, required: true },
    createdAt: { type: Date, required: true },
    response: { type: Schema.Types.Mixed, default: null },
  },
  { collection: 'idempotency_keys', versionKey: false },
);
// FerretDB has no TTL index: expired keys are pruned by createdAt.
idempotencyKeySchema.index({ createdAt: 1 });

export interface DeploymentModels {
  deployments: Model<DeploymentDoc>;
  transitions: Model<TransitionDoc>;
  leases: Model<LeaseDoc>;
  idempotencyKeys: Model<IdempotencyKeyDoc>;
}

function modelOf<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/** The service's models on its own connection (each test file has its own database). */
export function deploymentModels(connection: Connection): DeploymentModels {
  return {
    deployments: modelOf(connection, 'Deployment', deploymentSchema),
    transitions: modelOf(connection, 'DeploymentTransition', transitionSchema),
    leases: modelOf(connection, 'DeploymentLease', leaseSchema),
    idempotencyKeys: modelOf(connection, 'IdempotencyKey', idempotencyKeySchema),
  };
}

/** Every model, for syncIndexes at start-up. */
export const allModels = (models: DeploymentModels) => Object.values(models);
