import { Schema, type Types } from 'mongoose';
import { DEFAULT_SERVICE_SETTINGS, defineModel, type ServiceSettings } from '@platform/shared';
import { namedDocumentFields, type NamedDocument } from '../names/named-resources.model';

export interface ServiceDocument extends NamedDocument, Partial<ServiceSettings> {
  accountId: string;
  projectId: Types.ObjectId;
  /** Where its live deployment answers; null until one is DEPLOYED. */
  url?: string | null;
  /** The deployment that answers at `url`, and when it became DEPLOYED (newer ones win). */
  liveDeploymentId?: string | null;
  liveSince?: Date | null;
  /** How many variables it has: the quota is a conditional increment of this. */
  variableCount?: number;
}

const serviceSchema = new Schema<ServiceDocument>(
  {
    accountId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, required: true },
    ...namedDocumentFields,
    repository: { type: String, default: DEFAULT_SERVICE_SETTINGS.repository },
    branch: { type: String, default: DEFAULT_SERVICE_SETTINGS.branch },
    rootDirectory: { type: String, default: DEFAULT_SERVICE_SETTINGS.rootDirectory },
    buildCommand: { type: String, default: DEFAULT_SERVICE_SETTINGS.buildCommand },
    startCommand: { type: String, default: DEFAULT_SERVICE_SETTINGS.startCommand },
    healthCheckPath: { type: String, default: DEFAULT_SERVICE_SETTINGS.healthCheckPath },
    replicas: { type: Number, default: DEFAULT_SERVICE_SETTINGS.replicas },
    dockerfilePath: { type: String, default: DEFAULT_SERVICE_SETTINGS.dockerfilePath },
    url: { type: String, default: null },
    liveDeploymentId: { type: String, default: null },
    liveSince: { type: Date, default: null },
    variableCount: { type: Number, default: 0 },
  },
  { versionKey: false, strict: 'throw' },
);

// Names are unique per project: a create or rename onto a taken name fails with 11000. It also
// serves the cascade of a deleted project (its prefix).
serviceSchema.index({ projectId: 1, nameKey: 1 }, { unique: true });
// The project's list in the order it is read, and the quota count.
serviceSchema.index({ projectId: 1, accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export const serviceModel = defineModel<ServiceDocument>('Service', serviceSchema, 'services');
