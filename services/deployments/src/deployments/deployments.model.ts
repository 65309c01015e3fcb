import { Schema, type Connection, type Model, type Types } from 'mongoose';
import { DEPLOYMENT_STATUSES, outboxFields, type OutboxEntry } from '@platform/shared';
import type { DeploymentStatus } from './status';

/*
 * FerretDB (1.24, SQLite) runs an update as "find, then replace the document": two concurrent
 * updates of one document both match their filter and the later write silently undoes the
 * earlier one. Only inserts on a unique index are atomic. And only a filter that is exactly
 * `{ _id }` uses an index; anything else reads the whole collection. So:
 * - a status change is an insert-only transition whose _id is `<deployment>:<from-status>`: of
 *   a cancel and the pipeline leaving BUILDING, exactly one insert succeeds. It carries its event
 *   in its outbox, and afterwards only the outbox relay writes to it;
 * - a worker's claim is an insert-only lease whose _id is `<deployment>#<attempt>`, renewed only
 *   by the worker that inserted it;
 * - the deployment document is written once, by the API (insert), and never updated; its logs
 *   are a document of their own (`deployment_logs`, same _id), written only by the worker
 *   holding its lease: a list reads small documents, however long the logs (FerretDB decodes
 *   whole documents before it projects);
 * - the queue lists the deployments still to run, so the pipeline never scans all of them;
 * - a service's list is its timeline: insert-only entries keyed `<service>:<sequence>`, read by
 *   _id (see deployments.timeline.ts).
 * The hot paths (heartbeat, get, list) read by _id only.
 */

export interface DeploymentDoc {
  _id: Types.ObjectId;
  accountId: string;
  projectId: string;
  serviceId: string;
  commitHash: string;
  commitMessage: string;
  createdAt: Date;
  /**
   * Its place in the service's timeline (the entry `timelineEntryId(serviceId, timelineSeq)`).
   * Set at insert and never updated: the list trusts an entry only when they agree.
   */
  timelineSeq: number;
}

const deploymentSchema = new Schema<DeploymentDoc>(
  {
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    commitHash: { type: String, required: true },
    commitMessage: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    timelineSeq: { type: Number, required: true },
  },
  { collection: 'deployments', versionKey: false },
);
// No { serviceId, createdAt } index: the list reads the service's timeline by _id instead.
// project.deleted removes a project's deployments.
deploymentSchema.index({ projectId: 1 });

/** A deployment's build and deploy output; `_id` is the deployment's id. */
export interface DeploymentLogsDoc {
  _id: string;
  projectId: string;
  serviceId: string;
  logs: string;
}

const deploymentLogsSchema = new Schema<DeploymentLogsDoc>(
  {
    _id: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    logs: { type: String, default: '' },
  },
  { collection: 'deployment_logs', versionKey: false },
);
// project.deleted removes a project's logs.
deploymentLogsSchema.index({ projectId: 1 });

/** `<deployment>:<from-status>`, or `<deployment>:created` for the first status. */
export const transitionId = (deploymentId: string, from: DeploymentStatus | null) =>
  `${deploymentId}:${from ?? 'created'}`;

export interface TransitionDoc {
  _id: string;
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
    _id: { type: String, required: true },
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
transitionSchema.index({ projectId: 1, serviceId: 1 });

/** Digits of a timeline sequence in its _id, so the keys of one service also sort as text. */
const TIMELINE_SEQ_DIGITS = 12;

/** `<service>:<sequence, zero-padded>`: the service's deployment number `seq` (from 1). */
export const timelineEntryId = (serviceId: string, seq: number) =>
  `${serviceId}:${String(seq).padStart(TIMELINE_SEQ_DIGITS, '0')}`;

/**
 * One place in a service's list of deployments, newest = highest `seq`. Insert-only: inserting
 * it is what allocates the sequence number (a duplicate _id means the number is taken).
 */
export interface TimelineEntryDoc {
  /** timelineEntryId(serviceId, seq) */
  _id: string;
  seq: number;
  deploymentId: string;
  accountId: string;
  projectId: string;
  serviceId: string;
  /** The deployment's createdAt, later than the previous entry's (the list's order). */
  createdAt: Date;
}

const timelineEntrySchema = new Schema<TimelineEntryDoc>(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    deploymentId: { type: String, required: true },
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'deployment_timeline', versionKey: false },
);
// project.deleted and service.deleted remove a project's or a service's entries.
timelineEntrySchema.index({ projectId: 1, serviceId: 1 });

/**
 * Where a service's timeline ended when last looked: only a hint of where to start probing
 * (it may lag; it never runs ahead of an inserted entry).
 */
export interface TimelineHeadDoc {
  /** The service id. */
  _id: string;
  accountId: string;
  projectId: string;
  seq: number;
}

const timelineHeadSchema = new Schema<TimelineHeadDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    seq: { type: Number, required: true },
  },
  { collection: 'deployment_timeline_heads', versionKey: false },
);
timelineHeadSchema.index({ projectId: 1 });

/** `<deployment>#<attempt>`. */
export const leaseId = (deploymentId: string, attempt: number) => `${deploymentId}#${attempt}`;

export interface LeaseDoc {
  _id: string;
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
    _id: { type: String, required: true },
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
leaseSchema.index({ projectId: 1, serviceId: 1 });

/** A deployment the pipeline still has to run (BUILDING or DEPLOYING). */
export interface QueueEntryDoc {
  /** The deployment id. */
  _id: string;
  projectId: string;
  serviceId: string;
  createdAt: Date;
}

const queueEntrySchema = new Schema<QueueEntryDoc>(
  {
    _id: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'deployment_queue', versionKey: false },
);
// The claim: oldest first.
queueEntrySchema.index({ createdAt: 1, _id: 1 });
queueEntrySchema.index({ projectId: 1, serviceId: 1 });

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
  logs: Model<DeploymentLogsDoc>;
  transitions: Model<TransitionDoc>;
  leases: Model<LeaseDoc>;
  queue: Model<QueueEntryDoc>;
  idempotencyKeys: Model<IdempotencyKeyDoc>;
  timeline: Model<TimelineEntryDoc>;
  timelineHeads: Model<TimelineHeadDoc>;
}

function modelOf<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/** The service's models on its own connection (each test file has its own database). */
export function deploymentModels(connection: Connection): DeploymentModels {
  return {
    deployments: modelOf(connection, 'Deployment', deploymentSchema),
    logs: modelOf(connection, 'DeploymentLogs', deploymentLogsSchema),
    transitions: modelOf(connection, 'DeploymentTransition', transitionSchema),
    leases: modelOf(connection, 'DeploymentLease', leaseSchema),
    queue: modelOf(connection, 'DeploymentQueueEntry', queueEntrySchema),
    idempotencyKeys: modelOf(connection, 'IdempotencyKey', idempotencyKeySchema),
    timeline: modelOf(connection, 'DeploymentTimelineEntry', timelineEntrySchema),
    timelineHeads: modelOf(connection, 'DeploymentTimelineHead', timelineHeadSchema),
  };
}

/** Every model, for syncIndexes at start-up. */
export const allModels = (models: DeploymentModels) => Object.values(models);
