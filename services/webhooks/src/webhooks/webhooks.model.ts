import { Schema, type Types } from 'mongoose';
import { defineModel } from '@platform/shared';

export const WEBHOOK_EVENT_TYPES = ['deployment.status_changed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Why the platform (not the owner) turned a webhook off. */
export type DisabledReason = 'gone' | 'failing' | 'owner';

export interface WebhookDoc {
  _id: Types.ObjectId;
  projectId: string;
  accountId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  /** Stored as is: signing needs the key itself, so it cannot be hashed. Never logged. */
  secret: string;
  disabledReason: DisabledReason | null;
  /** When the current run of failed attempts began; null after any success. */
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const webhookSchema = new Schema<WebhookDoc>(
  {
    projectId: { type: String, required: true },
    accountId: { type: String, required: true },
    url: { type: String, required: true },
    events: { type: [String], required: true },
    enabled: { type: Boolean, required: true, default: true },
    secret: { type: String, required: true },
    disabledReason: { type: String, default: null },
    failingSince: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);

// Lists (newest first) and the event fan-out both select by project.
webhookSchema.index({ projectId: 1, createdAt: -1, _id: -1 });

export const webhookModel = defineModel<WebhookDoc>('Webhook', webhookSchema, 'webhooks');
