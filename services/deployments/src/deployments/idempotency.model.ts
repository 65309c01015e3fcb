import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';

export interface IdempotencyKeyDoc {
  /** `${accountId}:${key}`: keys are per account. */
  _id: string;
  requestHash: string;
  /** Chosen with the key, so every repeat of the request can only ever create this one. */
  deploymentId: Types.ObjectId;
  /** The deployment's creation time: with its id and the request, what a repeat answers. */
  createdAt: Date;
}

const idempotencyKeySchema = new Schema<IdempotencyKeyDoc>(
  {
    _id: { type: String, required: true },
    requestHash: { type: String, required: true },
    deploymentId: { type: Schema.Types.ObjectId, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// Expired keys are pruned by createdAt (and an expired key found on use is replaced).
idempotencyKeySchema.index({ createdAt: 1 });

export const idempotencyKeyModel = defineModel<IdempotencyKeyDoc>(
  'IdempotencyKey',
  idempotencyKeySchema,
  'idempotency_keys',
);
