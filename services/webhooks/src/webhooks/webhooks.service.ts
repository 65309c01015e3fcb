import {
  conflict,
  notFound,
  parseObjectId,
  validationError,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { Types } from 'mongoose';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { generateWebhookSecret } from '../deliveries/signature';
import { EgressRefusedError, type EgressGuard } from '../egress/egress-guard';
import type { Webhook, WebhookChanges, WebhooksRepository } from './webhooks.repository';
import {
  DEFAULT_EVENTS,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from './webhooks.schemas';

export const MAX_WEBHOOKS_PER_PROJECT = 20;

export interface WebhooksServiceDeps {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  guard: EgressGuard;
}

export class WebhooksService {
  constructor(private readonly deps: WebhooksServiceDeps) {}

  async createWebhook(
    accountId: string,
    projectId: string,
    input: CreateWebhookInput,
  ): Promise<Webhook> {
    await this.assertUrlAllowed(input.url);
    if ((await this.deps.webhooks.countInProject(projectId)) >= MAX_WEBHOOKS_PER_PROJECT) {
      throw conflict(`A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks.`);
    }
    return this.deps.webhooks.insert({
      projectId,
      accountId,
      url: input.url,
      events: input.events ?? DEFAULT_EVENTS,
      secret: generateWebhookSecret(),
    });
  }

  async getWebhook(projectId: string, webhookId: string): Promise<Webhook> {
    const webhook = await this.deps.webhooks.findInProject(projectId, parseWebhookId(webhookId));
    if (!webhook) throw notFound('Webhook');
    return webhook;
  }

  listWebhooks(projectId: string, request: PageRequest): Promise<Page<Webhook>> {
    return this.deps.webhooks.listInProject(projectId, request);
  }

  /** Applies a PATCH; turning a webhook off also stops its pending deliveries. */
  async updateWebhook(
    projectId: string,
    webhookId: string,
    input: UpdateWebhookInput,
  ): Promise<Webhook> {
    const id = parseWebhookId(webhookId);
    if (input.url !== undefined) await this.assertUrlAllowed(input.url);
    const changes: WebhookChanges = {};
    if (input.url !== undefined) changes.url = input.url;
    if (input.events !== undefined) changes.events = input.events;
    if (input.enabled === true) {
      Object.assign(changes, { enabled: true, disabledReason: null, failingSince: null });
    }
    if (input.enabled === false)
      Object.assign(changes, { enabled: false, disabledReason: 'owner' });
    if (input.rotateSecret) changes.secret = generateWebhookSecret();
    const webhook = await this.deps.webhooks.updateInProject(projectId, id, changes);
    if (!webhook) throw notFound('Webhook');
    if (input.enabled === false) await this.deps.deliveries.cancelPending(id);
    return webhook;
  }

  async deleteWebhook(projectId: string, webhookId: string): Promise<void> {
    const id = parseWebhookId(webhookId);
    if (!(await this.deps.webhooks.deleteFromProject(projectId, id))) throw notFound('Webhook');
    await this.deps.deliveries.deleteForWebhook(id);
  }

  /** A deleted project takes its webhooks and their deliveries with it; returns the counts. */
  async deleteProject(projectId: string): Promise<{ webhooks: number; deliveries: number }> {
    return {
      webhooks: await this.deps.webhooks.deleteInProject(projectId),
      deliveries: await this.deps.deliveries.deleteInProject(projectId),
    };
  }

  private async assertUrlAllowed(url: string): Promise<void> {
    try {
      await this.deps.guard.assertUrlAllowed(new URL(url));
    } catch (err) {
      if (err instanceof EgressRefusedError)
        throw validationError([{ path: 'url', message: err.message }]);
      throw err;
    }
  }
}

export const parseWebhookId = (webhookId: string): Types.ObjectId =>
  parseObjectId(webhookId, 'Webhook');
