import { Schema, type Types } from 'mongoose';
import { DEPLOYMENT_STATUSES, defineModel, outboxFields, type OutboxEntry } from '@platform/shared';
import type { DeploymentStatus } from './status';

/**
 * A deployment is one document that holds its state: its status and when it changed, the events
 * it has yet to publish (the outbox), and the pipeline's lease on it. Every status change is one
 * conditional update of it (see deployments.repository.ts), so of racing changes exactly one
 * wins. Its output lives in a document of its own (`deployment_logs`), so lists read small
 * documents and the log can grow without rewriting the deployment.
 */
export interface DeploymentDoc {
  _id: Types.ObjectId;
  accountId: string;
  projectId: string;
  serviceId: string;
  commitHash: string;
  commitMessage: string;
  status: DeploymentStatus;
  createdAt: Date;
  statusChangedAt: Date;
  deployedAt: Date | null;
  /** The pipeline worker holding it, until `leaseUntil`; the epoch when nobody does. */
  leaseOwner: string | null;
  leaseUntil: Date;
  /** How many times a worker claimed it; the current claim is attempt number `attempts`. */
  attempts: number;
  /** When a worker last claimed it: the pipeline serves the account served least recently first. */
  claimedAt: Date | null;
  /** Why it was cancelled when not by its owner: `superseded by <id>` (newest wins). */
  cancelReason: string | null;
  /** Claims given back in good order (a worker shutting down), so not lost with their worker. */
  handedBack: number;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

/** `leaseUntil` of a deployment nobody holds. */
export const NO_LEASE = new Date(0);

/** Whose a document is, in both collections: what reads filter on and deletions remove by. */
const ownerFields = {
  accountId: { type: String, required: true },
  projectId: { type: String, required: true },
  serviceId: { type: String, required: true },
};

const deploymentSchema = new Schema<DeploymentDoc>(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    ...ownerFields,
    commitHash: { type: String, required: true },
    commitMessage: { type: String, default: '' },
    status: { type: String, enum: DEPLOYMENT_STATUSES, required: true },
    createdAt: { type: Date, required: true },
    statusChangedAt: { type: Date, required: true },
    deployedAt: { type: Date, default: null },
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Date, default: NO_LEASE },
    attempts: { type: Number, default: 0 },
    handedBack: { type: Number, default: 0 },
    claimedAt: { type: Date, default: null },
    cancelReason: { type: String, default: null },
    ...outboxFields,
  },
  { versionKey: false },
);
// A service's list, newest first, and the same filtered by status.
deploymentSchema.index({ serviceId: 1, createdAt: -1, _id: -1 });
deploymentSchema.index({ serviceId: 1, status: 1, createdAt: -1, _id: -1 });
// The pipeline's work: deployments still BUILDING or DEPLOYING, oldest first.
deploymentSchema.index({ status: 1, createdAt: 1 });
// Fair share: when each waiting account was served last.
deploymentSchema.index({ accountId: 1, claimedAt: -1 });
// project.deleted removes a project's deployments.
deploymentSchema.index({ projectId: 1 });

export const deploymentModel = defineModel<DeploymentDoc>(
  'Deployment',
  deploymentSchema,
  'deployments',
);

/** A deployment's build and deploy output; `_id` is the deployment's id. */
export interface DeploymentLogsDoc {
  _id: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  logs: string;
  /** The claim (the deployment's `attempts`) that wrote `logs` last; an earlier one may not. */
  attempt: number;
  /** A deployed app's release, and how much of its log `logs` holds (LiveLogs goes on from there). */
  release: { id: string; offset: number } | null;
}

const deploymentLogsSchema = new Schema<DeploymentLogsDoc>(
  {
    _id: { type: String, required: true },
    ...ownerFields,
    logs: { type: String, default: '' },
    attempt: { type: Number, default: 0 },
    release: {
      type: new Schema({ id: String, offset: Number }, { _id: false }),
      default: null,
    },
  },
  { versionKey: false },
);
// project.deleted and service.deleted remove their logs.
deploymentLogsSchema.index({ projectId: 1, serviceId: 1 });
// LiveLogs finds the log a running app's output goes on in.
deploymentLogsSchema.index({ 'release.id': 1 });

export const deploymentLogsModel = defineModel<DeploymentLogsDoc>(
  'DeploymentLogs',
  deploymentLogsSchema,
  'deployment_logs',
);
