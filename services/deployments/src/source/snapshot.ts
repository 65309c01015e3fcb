import { Schema } from 'mongoose';
import { z } from 'zod';
import {
  createInternalClient,
  defineModel,
  insertOnce,
  notFound,
  serviceUnavailable,
} from '@platform/shared';
import type { ServiceRef } from '../deployments/deployments.repository';

/**
 * A service's variable as the projects service hands it over: a plain value, or a secret still
 * sealed (only the pipeline opens it, just before it enters a sandboxed process).
 */
const sourceVariable = z.discriminatedUnion('secret', [
  z.object({ name: z.string(), secret: z.literal(false), value: z.string() }),
  z.object({ name: z.string(), secret: z.literal(true), sealed: z.string() }),
]);
export type SourceVariable = z.infer<typeof sourceVariable>;

/** `GET /internal/projects/:p/services/:s/source` of the projects service (contracts.md settings). */
const sourceAnswer = z.object({
  repository: z.string().nullable(),
  branch: z.string(),
  rootDirectory: z.string(),
  buildCommand: z.string().nullable(),
  startCommand: z.string().nullable(),
  healthCheckPath: z.string(),
  variables: z.array(sourceVariable),
});

/**
 * What a deployment builds and runs, fixed when it is triggered (contracts.md: "a deployment uses
 * the variables as they were when it was triggered"): the service's settings and variables then.
 */
export type ServiceSource = z.infer<typeof sourceAnswer>;

/**
 * A deployment's source: the service's source at the trigger, and for a rollback the deployment
 * whose kept build it runs instead of building (`buildOf`; null: it builds its own).
 */
export interface SourceSnapshot extends ServiceSource {
  buildOf: string | null;
}

/**
 * Asks the projects service for a service's source as the caller (PROJECTS_URL, INTERNAL_SECRET):
 * 404 when it is not the caller's (deleted meanwhile), 503 when projects does not answer.
 */
export function projectsSourceClient(config: { PROJECTS_URL: string; INTERNAL_SECRET: string }) {
  const projects = createInternalClient({
    baseUrl: config.PROJECTS_URL,
    service: 'projects',
    internalSecret: config.INTERNAL_SECRET,
  });
  return {
    async sourceOf(ref: ServiceRef, requestId?: string): Promise<ServiceSource> {
      const answer = await projects.findJson(
        `/internal/projects/${ref.projectId}/services/${ref.serviceId}/source`,
        { accountId: ref.accountId, requestId },
      );
      if (answer === null) throw notFound('Service');
      const parsed = sourceAnswer.safeParse(answer);
      // Projects answering something else is a version mismatch: retry later, as for an outage.
      if (!parsed.success) throw serviceUnavailable();
      return parsed.data;
    },
  };
}
export type SourceClient = ReturnType<typeof projectsSourceClient>;

/** `deployment_sources`: one document per deployment, `_id` the deployment's id. */
export interface SourceSnapshotDoc extends SourceSnapshot {
  _id: string;
  accountId: string;
  projectId: string;
  serviceId: string;
}

const sourceSnapshotSchema = new Schema<SourceSnapshotDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    projectId: { type: String, required: true },
    serviceId: { type: String, required: true },
    repository: { type: String, default: null },
    branch: { type: String, required: true },
    rootDirectory: { type: String, default: '' },
    buildCommand: { type: String, default: null },
    startCommand: { type: String, default: null },
    healthCheckPath: { type: String, required: true },
    // Plain values as they are, secrets sealed by the projects service (never opened at rest).
    variables: {
      type: [
        new Schema(
          { name: String, secret: Boolean, value: String, sealed: String },
          { _id: false },
        ),
      ],
      default: [],
    },
    buildOf: { type: String, default: null },
  },
  { versionKey: false },
);
// project.deleted and service.deleted remove the snapshots with their deployments.
sourceSnapshotSchema.index({ projectId: 1, serviceId: 1 });

export const sourceSnapshotModel = defineModel<SourceSnapshotDoc>(
  'DeploymentSource',
  sourceSnapshotSchema,
  'deployment_sources',
);

/** The snapshots: written before their deployment, so a deployment always has one. */
export class SourceSnapshots {
  constructor(private readonly model: ReturnType<typeof sourceSnapshotModel>) {}

  /** Keeps the snapshot of deployment `id`; a repeat (an idempotent retry) keeps the first. */
  async save(ref: ServiceRef, id: string, snapshot: SourceSnapshot): Promise<void> {
    await insertOnce(this.model.create({ _id: id, ...ref, ...snapshot }));
  }

  async find(id: string): Promise<SourceSnapshot | null> {
    const doc = await this.model.findById(id, { _id: 0 }).lean<SourceSnapshotDoc>();
    if (!doc) return null;
    const { accountId: _a, projectId: _p, serviceId: _s, ...snapshot } = doc;
    return snapshot;
  }

  async deleteByProject(accountId: string, projectId: string): Promise<void> {
    await this.model.deleteMany({ projectId, accountId });
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<void> {
    await this.model.deleteMany({ projectId, serviceId, accountId });
  }
}
