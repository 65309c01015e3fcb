import { Schema, type Types } from 'mongoose';
import { DEPLOYMENT_STATUSES, defineModel, outboxFields, type OutboxEntry } from '@platform/shared';
import { ownerFields, type OwnerFields } from '../owner-fields';
import type { DeploymentStatus } from './status';

/** The account limits a deployment still to build can wait for (account-limits.ts). */
export const WAIT_REASONS = ['ACCOUNT_BUILD_LIMIT', 'ACCOUNT_APP_LIMIT'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/**
 * A deployment is one document that holds its state: its status and when it changed, the events
 * it has yet to publish (the outbox), and the pipeline's lease on it. Every status change is one
 * conditional update of it (see deployments.repository.ts), so of racing changes exactly one
 * wins. Its output lives in a document of its own (`deployment_logs`), so lists read small
 * documents and the log can grow without rewriting the deployment.
 */
export interface DeploymentDoc extends OwnerFields {
  _id: Types.ObjectId;
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
  /**
   * Until when one trigger superseding it has it (its reason line, then its status change), so
   * that of a burst of racing triggers one writes the line, not each of them.
   */
  supersedeClaimUntil?: Date | null;
  /** Claims given back in good order (a worker shutting down), so not lost with their worker. */
  handedBack: number;
  /** The account limit the pipeline last said (in the log) this deployment waits for. */
  waitingNoted?: WaitReason | null;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

/** `leaseUntil` of a deployment nobody holds. */
export const NO_LEASE = new Date(0);

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
    supersedeClaimUntil: { type: Date, default: null },
    waitingNoted: { type: String, enum: [...WAIT_REASONS, null], default: null },
    ...outboxFields,
  },
  { versionKey: false },
);
// A service's list, newest first, and the same filtered by status.
deploymentSchema.index({ serviceId: 1, createdAt: -1, _id: -1 });
deploymentSchema.index({ serviceId: 1, status: 1, createdAt: -1, _id: -1 });
// The pipeline's work: deployments still BUILDING or DEPLOYING, oldest first.
deploymentSchema.index({ status: 1, createdAt: 1 });
// Restoring the live apps: each service with a DEPLOYED deployment, one index key each.
deploymentSchema.index({ status: 1, serviceId: 1 });
// Fair share: when each waiting account was served last.
deploymentSchema.index({ accountId: 1, claimedAt: -1 });
// Per-account limits: an account's builds held, its services with an app (account-limits.ts).
deploymentSchema.index({ accountId: 1, status: 1, serviceId: 1, leaseUntil: 1 });
// project.deleted removes a project's deployments.
deploymentSchema.index({ projectId: 1 });

export const deploymentModel = defineModel<DeploymentDoc>(
  'Deployment',
  deploymentSchema,
  'deployments',
);

/**
 * A deployment's log is append-only: numbered lines in chunks (`deployment_log_chunks`, one per
 * write), and this head (`deployment_logs`, `_id` the deployment's id) saying who may write and
 * what is kept. The chunks are the numbering's only truth: each one is numbered from the one
 * before it (log-store.ts), so no write and no crash between writes can leave a gap. A follower
 * reads only the chunks past the last line it has; the oldest chunks go beyond LOG_LIMIT_BYTES.
 */
export interface DeploymentLogsDoc extends OwnerFields {
  _id: string;
  /** The claim (the deployment's `attempts`) that wrote last; an earlier one may not write. */
  attempt: number;
  /** A deployed app's release, and how much of its log is in (LiveLogs goes on from there). */
  release: { id: string; offset: number } | null;
  /** The oldest chunk kept. */
  firstSeq: number;
  /** Bytes of output trimmed away: what is kept is the last chunk's `totalBytes` less these. */
  droppedBytes: number;
  /** Whether older output was dropped (the log then starts with a marker). */
  trimmed: boolean;
}

const deploymentLogsSchema = new Schema<DeploymentLogsDoc>(
  {
    _id: { type: String, required: true },
    ...ownerFields,
    attempt: { type: Number, default: 0 },
    release: {
      type: new Schema({ id: String, offset: Number }, { _id: false }),
      default: null,
    },
    firstSeq: { type: Number, default: 0 },
    droppedBytes: { type: Number, default: 0 },
    trimmed: { type: Boolean, default: false },
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

/**
 * One write of a deployment's log: whole lines, `firstLine` … `lastLine`, numbered after the
 * chunk `seq - 1` (its `lastLine` and `totalBytes`).
 */
export interface LogChunkDoc extends OwnerFields {
  _id: Types.ObjectId;
  deploymentId: string;
  seq: number;
  firstLine: number;
  lastLine: number;
  text: string;
  bytes: number;
  /** Bytes written to the log up to and with this chunk (trimming does not change it). */
  totalBytes: number;
}

const logChunkSchema = new Schema<LogChunkDoc>(
  {
    deploymentId: { type: String, required: true },
    ...ownerFields,
    seq: { type: Number, required: true },
    firstLine: { type: Number, required: true },
    lastLine: { type: Number, required: true },
    text: { type: String, required: true },
    bytes: { type: Number, required: true },
    totalBytes: { type: Number, required: true },
  },
  { versionKey: false },
);
// A log in order, its last chunk (what the next one is numbered after); a chunk per number.
logChunkSchema.index({ deploymentId: 1, seq: 1 }, { unique: true });
// A follower's next lines: the chunks ending past the line it has.
logChunkSchema.index({ deploymentId: 1, lastLine: 1 });
// project.deleted and service.deleted remove them.
logChunkSchema.index({ projectId: 1, serviceId: 1 });

export const logChunkModel = defineModel<LogChunkDoc>(
  'DeploymentLogChunk',
  logChunkSchema,
  'deployment_log_chunks',
);
