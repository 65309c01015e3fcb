import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';
import { namedDocumentFields, type NamedDocument } from '../names/named-resources.model';

/** Where a service's code comes from and how it runs (contracts.md, Services). */
export interface ServiceSettings {
  repository: string | null;
  branch: string;
  rootDirectory: string;
  buildCommand: string | null;
  startCommand: string | null;
  healthCheckPath: string;
}

export const DEFAULT_SETTINGS: ServiceSettings = {
  repository: null,
  branch: 'main',
  rootDirectory: '',
  buildCommand: null,
  startCommand: null,
  healthCheckPath: '/',
};

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
    repository: { type: String, default: DEFAULT_SETTINGS.repository },
    branch: { type: String, default: DEFAULT_SETTINGS.branch },
    rootDirectory: { type: String, default: DEFAULT_SETTINGS.rootDirectory },
    buildCommand: { type: String, default: DEFAULT_SETTINGS.buildCommand },
    startCommand: { type: String, default: DEFAULT_SETTINGS.startCommand },
    healthCheckPath: { type: String, default: DEFAULT_SETTINGS.healthCheckPath },
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
