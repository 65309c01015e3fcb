import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.model';
import type { Webhook } from './webhooks.repository';

export const MAX_URL_LENGTH = 2048;
export const DEFAULT_EVENTS: WebhookEventType[] = ['deployment.status_changed'];

/**
 * An absolute http(s) URL without credentials, normalised by WHATWG rules (so `2130706433`
 * becomes `127.0.0.1` before any address check). Where it may point is checked by the
 * EgressGuard, which needs DNS and so runs in the service.
 */
const webhookUrl = z
  .string()
  .trim()
  .min(1)
  .max(MAX_URL_LENGTH)
  .transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an absolute URL' });
      return z.NEVER;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an http or https URL' });
      return z.NEVER;
    }
    if (url.username || url.password) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must not contain credentials' });
      return z.NEVER;
    }
    return url.href;
  })
  .pipe(z.string().max(MAX_URL_LENGTH));

const events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(20)
  .transform((list) => [...new Set(list)]);

export const createWebhookBody = z.object({ url: webhookUrl, events: events.optional() }).strict();
export type CreateWebhookInput = z.infer<typeof createWebhookBody>;

export const updateWebhookBody = z
  .object({
    url: webhookUrl.optional(),
    events: events.optional(),
    enabled: z.boolean().optional(),
    rotateSecret: z.boolean().optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, {
    message: 'give at least one of url, events, enabled, rotateSecret',
  });
export type UpdateWebhookInput = z.infer<typeof updateWebhookBody>;

export interface WebhookView {
  id: string;
  projectId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  createdAt: string;
  secret?: string;
}

/**
 * The client's view of a webhook: `secret` (in clear) is given only when just created or
 * rotated; the stored one is sealed and never shown.
 */
export function webhookView(webhook: Webhook, secret?: string): WebhookView {
  const view: WebhookView = {
    id: webhook.id,
    projectId: webhook.projectId,
    url: webhook.url,
    events: webhook.events,
    enabled: webhook.enabled,
    createdAt: webhook.createdAt.toISOString(),
  };
  if (secret !== undefined) view.secret = secret;
  return view;
}
