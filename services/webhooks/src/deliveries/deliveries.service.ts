import { randomUUID } from 'node:crypto';
import {
  conflict,
  notFound,
  parseObjectId,
  type DeploymentStatusChangedEvent,
  type Page,
  type PageRequest,
} from '@platform/shared';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type {
  DeliveriesRepository,
  Delivery,
  DeliveryListItem,
  NewDelivery,
} from './deliveries.repository';
import type { DeliveryWorker } from './delivery-worker';
import { TEST_EVENT_TYPE, statusChangedBody, testEventBody } from './payloads';

/** The part of the delivery worker that new deliveries are handed to. */
export type DeliveryDispatcher = Pick<DeliveryWorker, 'reserve' | 'sendNow' | 'release' | 'notify'>;

export interface DeliveriesServiceDeps {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  dispatcher: DeliveryDispatcher;
  /** Finished deliveries are deleted this long after their last change. */
  retentionMs: number;
  now?: () => Date;
}

export class DeliveriesService {
  private readonly now: () => Date;

  constructor(private readonly deps: DeliveriesServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Records one delivery per enabled, subscribed webhook of the event's project, with the body
   * fixed now, and has each sent at once. A re-read event records nothing new. Returns how many
   * were recorded.
   */
  async recordStatusChange(event: DeploymentStatusChangedEvent): Promise<number> {
    const webhooks = await this.deps.webhooks.findSubscribed(
      event.projectId,
      event.accountId,
      event.type,
    );
    const body = statusChangedBody(event);
    let recorded = 0;
    for (const webhook of webhooks) {
      const delivery = await this.recordAndSend(webhook, {
        eventId: event.eventId,
        type: event.type,
        body,
        manual: false,
      });
      if (delivery) recorded++;
    }
    return recorded;
  }

  /** A `webhook.test` event for one webhook: a single attempt, visible in its delivery log. */
  async sendTestEvent(webhook: Webhook): Promise<void> {
    assertEnabled(webhook);
    await this.recordAndSend(webhook, {
      eventId: randomUUID(),
      type: TEST_EVENT_TYPE,
      body: testEventBody(webhook, this.now()),
      manual: true,
    });
  }

  private async recordAndSend(
    webhook: Webhook,
    fields: Pick<NewDelivery, 'eventId' | 'type' | 'body' | 'manual'>,
  ): Promise<Delivery | null> {
    const { dispatcher } = this.deps;
    const webhookId = parseObjectId(webhook.id);
    const reservation = dispatcher.reserve(webhookId);
    let delivery: Delivery | null;
    try {
      delivery = await this.deps.deliveries.insert(
        { ...fields, webhookId, projectId: webhook.projectId, accountId: webhook.accountId },
        this.now(),
        reservation?.lease,
      );
    } catch (err) {
      if (reservation) dispatcher.release(reservation);
      throw err;
    }
    if (reservation && delivery) dispatcher.sendNow(reservation, delivery, webhook);
    else if (reservation) dispatcher.release(reservation);
    else if (delivery) dispatcher.notify(webhookId);
    return delivery;
  }

  listDeliveries(webhook: Webhook, request: PageRequest): Promise<Page<DeliveryListItem>> {
    return this.deps.deliveries.listForWebhook(parseObjectId(webhook.id), request);
  }

  async getDelivery(webhook: Webhook, deliveryId: string): Promise<Delivery> {
    const delivery = await this.deps.deliveries.findInWebhook(
      parseObjectId(webhook.id),
      parseObjectId(deliveryId, 'Delivery'),
    );
    if (!delivery) throw notFound('Delivery');
    return delivery;
  }

  /**
   * A new attempt of the same event (same `webhook-id`, same body) now. 409 while an attempt
   * of it is running or when the webhook is disabled.
   */
  async redeliver(webhook: Webhook, deliveryId: string): Promise<Delivery> {
    assertEnabled(webhook);
    const current = await this.getDelivery(webhook, deliveryId);
    const due = await this.deps.deliveries.redeliver(current, this.now());
    if (!due) {
      await this.getDelivery(webhook, deliveryId);
      throw conflict('An attempt of this delivery is in progress: try again when it is over.');
    }
    this.deps.dispatcher.notify();
    return due;
  }

  /** Deletes the finished deliveries past retention (housekeeping); returns how many. */
  deleteExpired(): Promise<number> {
    return this.deps.deliveries.deleteFinishedBefore(
      new Date(this.now().getTime() - this.deps.retentionMs),
    );
  }
}

function assertEnabled(webhook: Webhook): void {
  if (!webhook.enabled) throw conflict('The webhook is disabled: enable it first.');
}
