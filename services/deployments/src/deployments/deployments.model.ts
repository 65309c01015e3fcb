import { Schema, type Connection, type Model, type Types } from 'mongoose';
import { DEPLOYMENT_STATUSES, outboxFields, type OutboxEntry } from '@platform/shared';
import type { DeploymentStatus } from './status';

export interface DeploymentDoc {
  _id: Types.ObjectId;
  accountId: string;
  projectId: string;
  serviceId: string;
  status: DeploymentStatus;
  commitHash: string;
  commitMessage: string;
  logs: string;
  createdAt: Date;
  statusChangedAt: Date;
  deployedAt: Date | null;
  /** The pipeline worker running it, while one does. */
  leaseOwner: string | null;
  /** A worker that stops renewing its claim loses it at this time; the epoch when unclaimed. */
  leaseUntil: Date;
  /** How many times a worker claimed it; a claim released on shutdown gives its attempt back. */
  attempts: number;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

/** An unclaimed deployment: any worker may take it. */
export const NO_LEASE = new Date(0);

const deploymentSchema = new Schema<DeploymentDoc>(
  {
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    status: { type: String, enum: DEPLOYMENT_STATUSES, required: true },
    commitHash: { type: String, required: true },
    commitMessage: { type: String, default: '' },
    logs: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    statusChangedAt: { type: Date, required: true },
    deployedAt: { type: Date, default: null },
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Date, default: NO_LEASE },
    attempts: { type: Number, default: 0 },
  },
  { collection: 'deployments', versionKey: false },
);
deploymentSchema.add(outboxFields);
// A service's deployments, newest first (the list and its cursor).
deploymentSchema.index({ serviceId: 1, createdAt: -1, _id: -1 });
// The pipeline's claim: active deployments whose lease is free or expired.
deploymentSchema.index({ status: 1, leaseUntil: 1 });
// project.deleted removes a project's deployments.
deploymentSchema.index({ projectId: 1 });

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
  idempotencyKeys: Model<IdempotencyKeyDoc>;
}

/** The service's models on its own connection (each test file has its own database). */
export function deploymentModels(connection: Connection): DeploymentModels {
  return {
    deployments:
      (connection.models.Deployment as Model<DeploymentDoc> | undefined) ??
      connection.model<DeploymentDoc>('Deployment', deploymentSchema),
    idempotencyKeys:
      (connection.models.IdempotencyKey as Model<IdempotencyKeyDoc> | undefined) ??
      connection.model<IdempotencyKeyDoc>('IdempotencyKey', idempotencyKeySchema),
  };
}
