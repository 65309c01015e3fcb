import { Schema, type InferSchemaType, type Require_id } from 'mongoose';
import { defineModel } from '@platform/shared';

export const WEBHOOK_EVENT_TYPES = ['deployment.status_changed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Why the platform (not the owner) turned a webhook off. */
export const DISABLED_REASONS = ['gone', 'failing', 'owner'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

const webhookSchema = new Schema(
  {
    projectId: { type: String, required: true },
    accountId: { type: String, required: true },
    url: { type: String, required: true },
    events: { type: [{ type: String, enum: WEBHOOK_EVENT_TYPES }], required: true },
    enabled: { type: Boolean, required: true, default: true },
    /**
     * The signing secret sealed with ENCRYPTION_KEY (`createSecretBox`, bound to this webhook:
     * see webhook-secrets.ts); signing needs the key itself, so it cannot be hashed. Records of
     * earlier versions hold it in clear (`whsec_…`) until the housekeeping seals it. Never logged.
     */
    secret: { type: String, required: true },
    /** After a rotation, the secret before it, sealed the same way, signing too until it expires. */
    previousSecret: { type: String, default: null },
    /** When `previousSecret` stops signing (WEBHOOK_SECRET_OVERLAP after the rotation). */
    previousSecretExpiresAt: { type: Date, default: null },
    disabledReason: { type: String, enum: [...DISABLED_REASONS, null], default: null },
    /** When the current run of failed attempts began; null after any success. */
    failingSince: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);

/** A webhook as stored: its type is the schema's own (one definition of its fields). */
export type WebhookDoc = Require_id<InferSchemaType<typeof webhookSchema>>;

// Lists (newest first) and the event fan-out both select by project.
webhookSchema.index({ projectId: 1, createdAt: -1, _id: -1 });

export const webhookModel = defineModel<WebhookDoc>('Webhook', webhookSchema, 'webhooks');

/**
 * A project's webhook count, `_id` its id: the quota is taken by a conditional `$inc` of it
 * before a webhook is inserted and given back when one is deleted, so racing creates cannot pass
 * it (a count before the insert could be passed by every racer at once).
 */
const webhookQuotaSchema = new Schema(
  {
    _id: { type: String, required: true },
    webhooks: { type: Number, required: true, default: 0 },
  },
  { versionKey: false },
);
export type WebhookQuotaDoc = InferSchemaType<typeof webhookQuotaSchema>;

export const webhookQuotaModel = defineModel<WebhookQuotaDoc>(
  'WebhookQuota',
  webhookQuotaSchema,
  'webhook_quotas',
);
