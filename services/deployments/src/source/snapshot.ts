import { Schema } from 'mongoose';
import { z } from 'zod';
import { DEFAULT_SERVICE_SETTINGS, defineModel } from '@platform/shared';
import { ownerFields, type OwnerFields } from '../owner-fields';

/**
 * A service's variable as the projects service hands it over: a plain value, or a secret still
 * sealed (only the pipeline opens it, just before it enters a sandboxed process).
 */
const sourceVariable = z.discriminatedUnion('secret', [
  z.object({ name: z.string(), secret: z.literal(false), value: z.string() }),
  z.object({ name: z.string(), secret: z.literal(true), sealed: z.string() }),
]);
export type SourceVariable = z.infer<typeof sourceVariable>;

/**
 * `GET /internal/projects/:p/services/:s/source` of the projects service (contracts.md settings),
 * ids as projects stores them: it answers only the caller's service, so it is an ownership check
 * too (trigger.repository.ts).
 */
export const sourceAnswer = z.object({
  accountId: z.string(),
  projectId: z.string(),
  serviceId: z.string(),
  repository: z.string().nullable(),
  branch: z.string(),
  rootDirectory: z.string(),
  buildCommand: z.string().nullable(),
  startCommand: z.string().nullable(),
  healthCheckPath: z.string(),
  // A projects service from before the setting answers without it: one copy, as it then meant.
  replicas: z.number().default(DEFAULT_SERVICE_SETTINGS.replicas),
  // Likewise: no Dockerfile.
  dockerfilePath: z.string().nullable().default(DEFAULT_SERVICE_SETTINGS.dockerfilePath),
  variables: z.array(sourceVariable),
});

/**
 * What a deployment builds and runs, fixed when it is triggered (contracts.md: "a deployment uses
 * the variables as they were when it was triggered"): the service's settings and variables then.
 */
export type ServiceSource = Omit<
  z.infer<typeof sourceAnswer>,
  'accountId' | 'projectId' | 'serviceId'
>;

/**
 * A deployment's source: the service's source at the trigger, and for a rollback the deployment
 * whose kept build it runs instead of building (`buildOf`; null: it builds its own).
 */
export interface SourceSnapshot extends ServiceSource {
  buildOf: string | null;
}

/** `deployment_sources`: one document per deployment, `_id` the deployment's id. */
export interface SourceSnapshotDoc extends SourceSnapshot, OwnerFields {
  _id: string;
}

const sourceSnapshotSchema = new Schema<SourceSnapshotDoc>(
  {
    _id: { type: String, required: true },
    ...ownerFields,
    repository: { type: String, default: null },
    branch: { type: String, required: true },
    rootDirectory: { type: String, default: '' },
    buildCommand: { type: String, default: null },
    startCommand: { type: String, default: null },
    healthCheckPath: { type: String, required: true },
    replicas: { type: Number, default: DEFAULT_SERVICE_SETTINGS.replicas },
    dockerfilePath: { type: String, default: DEFAULT_SERVICE_SETTINGS.dockerfilePath },
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

/**
 * The snapshots as the pipeline reads them and deletions remove them. The trigger writes each
 * before its deployment (trigger.repository.ts), so a deployment always has one.
 */
export class SourceSnapshots {
  constructor(private readonly model: ReturnType<typeof sourceSnapshotModel>) {}

  async find(id: string): Promise<SourceSnapshot | null> {
    const doc = await this.model.findById(id, { _id: 0 }).lean<SourceSnapshotDoc>();
    if (!doc) return null;
    const { accountId: _a, projectId: _p, serviceId: _s, ...snapshot } = doc;
    // A snapshot taken before the setting existed ran one copy.
    return { ...snapshot, replicas: snapshot.replicas ?? DEFAULT_SERVICE_SETTINGS.replicas };
  }

  async deleteByProject(accountId: string, projectId: string): Promise<void> {
    await this.model.deleteMany({ projectId, accountId });
  }

  async deleteByService(accountId: string, projectId: string, serviceId: string): Promise<void> {
    await this.model.deleteMany({ projectId, serviceId, accountId });
  }
}
