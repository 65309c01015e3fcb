import { Schema, type Connection, type InferSchemaType, type Model } from 'mongoose';
import { outboxFields } from '@platform/shared';

const projectSchema = new Schema(
  {
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    /** nameKeyOf(name) while live, deletedNameKeyOf(id) once deleted. */
    nameKey: { type: String, required: true },
    description: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    /** Set by DELETE: from then on the project reads as 404 until the cascade removes it. */
    deletedAt: { type: Date, default: null },
    // Spread rather than schema.add(), so the inferred document type has the outbox too.
    ...outboxFields,
  },
  { collection: 'projects', versionKey: false, strict: 'throw' },
);

// The last line of defence for unique names: inserts that race past the check get 11000.
projectSchema.index({ accountId: 1, nameKey: 1 }, { unique: true });
// Lists, the quota count and every lookup by owner.
projectSchema.index({ accountId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export type ProjectDocument = InferSchemaType<typeof projectSchema>;
export type ProjectModel = Model<ProjectDocument>;

export const createProjectModel = (connection: Connection): ProjectModel =>
  connection.model<ProjectDocument>('Project', projectSchema);
