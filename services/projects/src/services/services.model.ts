import { Schema, type Connection, type InferSchemaType, type Model } from 'mongoose';
import { outboxFields } from '@platform/shared';

const serviceSchema = new Schema(
  {
    accountId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    /** nameKeyOf(name) while live, deletedNameKeyOf(id) once deleted. */
    nameKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
    /** Set by DELETE: from then on the service reads as 404 until the cascade removes it. */
    deletedAt: { type: Date, default: null },
    // Spread rather than schema.add(), so the inferred document type has the outbox too.
    ...outboxFields,
  },
  { collection: 'services', versionKey: false, strict: 'throw' },
);

serviceSchema.index({ projectId: 1, nameKey: 1 }, { unique: true });
// Lists, the quota count and the cascade of a deleted project.
serviceSchema.index({ projectId: 1, deletedAt: 1, createdAt: -1, _id: -1 });

export type ServiceDocument = InferSchemaType<typeof serviceSchema>;
export type ServiceModel = Model<ServiceDocument>;

export const createServiceModel = (connection: Connection): ServiceModel =>
  connection.model<ServiceDocument>('Service', serviceSchema);
