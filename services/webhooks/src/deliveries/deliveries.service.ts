import { randomUUID } from 'node:crypto';
import {
  conflict,
  internal,
  notFound,
  parseObjectId,
  type CursorPosition,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type { DeliveriesRepository, Delivery } from './deliveries.repository';
import { TEST_EVENT_TYPE, statusChangedBody, testEventBody } from './payloads';

export interface DeliveriesServiceDeps {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  /** Called after a delivery became due, so the worker sends it now rather than at its next poll. */
  onDue: () => void;
  now?: () => Date;
}

export class DeliveriesService {
  private readonly now: () => Date;

  constructor(private readonly deps: DeliveriesServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Records one delivery per enabled, subscribed webhook of the event's project, with the body
   * fixed now. A re-read event records nothing new. Returns how many were recorded.
   */
  async recordStatusChange(event: DeploymentStatusChangedEvent): Promise<number> {
    const webhooks = await this.deps.webhooks.findSubscribed(
      event.projectId,
      event.accountId,
      event.type,
    );
    if (webhooks.length === 0) return 0;
    const body = statusChangedBody(event);
    let recorded = 0;
    for (const webhook of webhooks) {
      const delivery = await this.deps.deliveries.insert(
        {
          webhookId: parseObjectId(webhook.id),
          projectId: event.projectId,
          eventId: event.eventId,
          type: event.type,
          body,
          manual: false,
        },
        this.now(),
      );
      if (delivery) {
        recorded++;
        this.deps.onDue();
      }
    }
    return recorded;
  }

  /** A `webhook.test` event for one webhook: a single attempt, visible in its delivery log. */
  async sendTestEvent(webhook: Webhook): Promise<Delivery> {
    assertEnabled(webhook);
    const now = this.now();
    const delivery = await this.deps.deliveries.insert(
      {
        webhookId: parseObjectId(webhook.id),
        projectId: webhook.projectId,
        eventId: randomUUID(),
        type: TEST_EVENT_TYPE,
        body: testEventBody(webhook, now),
        manual: true,
      },
      now,
    );
    // A fresh event id cannot collide, so the delivery is always new.
    if (!delivery) throw internal();
    this.deps.onDue();
    return delivery;
  }

  listDeliveries(webhook: Webhook, limit: number, after?: CursorPosition): Promise<Delivery[]> {
    return this.deps.deliveries.listForWebhook(parseObjectId(webhook.id), limit, after);
  }

  async getDelivery(webhook: Webhook, deliveryId: string): Promise<Delivery> {
    const delivery = await this.deps.deliveries.findById(parseObjectId(deliveryId, 'Delivery'));
    if (!delivery || delivery.webhookId.toHexString() !== webhook.id) throw notFound('Delivery');
    return delivery;
  }

  /**
   * A new attempt of the same event (same `webhook-id`, same body) now. 409 while an attempt
   * of it is running or when the webhook is disabled.
   */
  async redeliver(webhook: Webhook, deliveryId: string): Promise<Delivery> {
    assertEnabled(webhook);
    const current = await this.getDelivery(webhook, deliveryId);
    const now = this.now();
    if (await this.deps.deliveries.isInFlight(parseObjectId(current.id), now)) {
      throw conflict('An attempt of this delivery is in progress: try again when it is over.');
    }
    const requeued = await this.deps.deliveries.requeue(current, now);
    if (!requeued) throw notFound('Delivery');
    this.deps.onDue();
    return requeued;
  }
}

function assertEnabled(webhook: Webhook): void {
  if (!webhook.enabled) throw conflict('The webhook is disabled: enable it first.');
}
