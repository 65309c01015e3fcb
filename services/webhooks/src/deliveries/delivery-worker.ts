import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/shared';
import type { Types } from 'mongoose';
import type { EgressGuard } from '../egress/egress-guard';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type { AttemptResult, DeliveriesRepository, Delivery } from './deliveries.repository';
import { withJitter } from './retry-schedule';
import { isSuccess, sendWebhook, type AttemptOutcome } from './send-webhook';
import { webhookHeaders } from './signature';

/** Attempts kept in a delivery's log (redeliveries can add more). */
export const MAX_LOGGED_ATTEMPTS = 50;
/** A claimed attempt not finished this long after its timeout belongs to a dead worker. */
const LEASE_MARGIN_MS = 30_000;

export interface DeliveryWorkerOptions {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  guard: EgressGuard;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  /** Attempts in flight at once, across all webhooks. */
  concurrency: number;
  /** A webhook whose every attempt failed for this long is disabled (5 days). */
  disableAfterMs: number;
  logger: Logger;
  /** How often to look for due deliveries when nobody called notify(). */
  pollIntervalMs?: number;
  /** How long stop() lets running attempts finish before aborting them. */
  stopGraceMs?: number;
  random?: () => number;
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Sends due deliveries. All state is in MongoDB (a claim is an atomic lease on the document),
 * so several instances can run and a restart loses nothing. Attempts run concurrently up to
 * `concurrency`, and one webhook never holds more than a quarter of the slots, so a slow or
 * dead receiver cannot hold up the others.
 */
export class DeliveryWorker {
  private running = false;
  private timer?: NodeJS.Timeout;
  private pumpLoop?: Promise<void>;
  private pumpAgain = false;
  private claimFailing = false;
  private readonly inFlight = new Map<string, Running>();
  private readonly perWebhook = new Map<string, { webhookId: Types.ObjectId; running: number }>();
  private readonly perWebhookLimit: number;
  private readonly log: Logger;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.perWebhookLimit = Math.max(1, Math.ceil(options.concurrency / 4));
    this.log = options.logger.child({ component: 'delivery-worker' });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.timer = setInterval(() => this.notify(), this.options.pollIntervalMs ?? 250);
    this.notify();
  }

  /** A delivery became due: look now instead of at the next poll. */
  notify(): void {
    if (!this.running) return;
    if (this.pumpLoop) {
      this.pumpAgain = true;
      return;
    }
    this.pumpLoop = this.pump().finally(() => {
      this.pumpLoop = undefined;
    });
  }

  /**
   * Stops claiming, lets running attempts finish for a grace period, then aborts the rest and
   * hands their deliveries back (due at once) for the next worker.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    await this.pumpLoop;
    const settled = Promise.all([...this.inFlight.values()].map((r) => r.done));
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, this.options.stopGraceMs ?? 5_000);
    });
    await Promise.race([settled, grace]);
    clearTimeout(graceTimer);
    for (const running of this.inFlight.values()) running.abort.abort();
    await Promise.all([...this.inFlight.values()].map((r) => r.done));
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (this.running && this.inFlight.size < this.options.concurrency) {
        const delivery = await this.claimNext();
        if (!delivery) break;
        this.launch(delivery);
      }
    } while (this.pumpAgain && this.running);
  }

  private async claimNext(): Promise<Delivery | null> {
    const now = new Date();
    try {
      const delivery = await this.options.deliveries.claimDue(
        now,
        new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS),
        randomUUID(),
        this.busyWebhookIds(),
      );
      if (this.claimFailing) this.log.info('claiming deliveries works again');
      this.claimFailing = false;
      return delivery;
    } catch (err) {
      // Logged once per outage, not at every poll.
      if (!this.claimFailing) this.log.warn({ err }, 'claiming deliveries failed');
      this.claimFailing = true;
      return null;
    }
  }

  private busyWebhookIds(): Types.ObjectId[] {
    return [...this.perWebhook.values()]
      .filter((entry) => entry.running >= this.perWebhookLimit)
      .map((entry) => entry.webhookId);
  }

  private launch(delivery: Delivery): void {
    const key = delivery.webhookId.toHexString();
    const entry = this.perWebhook.get(key) ?? { webhookId: delivery.webhookId, running: 0 };
    entry.running++;
    this.perWebhook.set(key, entry);
    const abort = new AbortController();
    const done = this.attempt(delivery, abort.signal)
      .catch((err: unknown) => {
        this.log.error({ err, deliveryId: delivery.id }, 'delivery attempt could not be recorded');
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        if (--entry.running === 0) this.perWebhook.delete(key);
        this.notify();
      });
    this.inFlight.set(delivery.id, { abort, done });
  }

  private async attempt(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const leaseId = delivery.leaseId!;
    const webhook = await this.options.webhooks.findById(delivery.webhookId);
    if (!webhook || !webhook.enabled) {
      await this.options.deliveries.cancel(delivery.id, leaseId);
      return;
    }
    const startedAt = new Date();
    const outcome = await sendWebhook({
      url: webhook.url,
      headers: webhookHeaders(webhook.secret, delivery.eventId, delivery.body, startedAt.getTime()),
      body: delivery.body,
      timeoutMs: this.options.timeoutMs,
      guard: this.options.guard,
      signal,
    });
    if (signal.aborted && outcome.statusCode === null) {
      await this.options.deliveries.release(delivery.id, leaseId, new Date());
      return;
    }
    await this.record(delivery, webhook, startedAt, outcome);
  }

  private async record(delivery: Delivery, webhook: Webhook, at: Date, outcome: AttemptOutcome) {
    const { deliveries, webhooks } = this.options;
    const attempts = [...delivery.attempts, { at, ...outcome }].slice(-MAX_LOGGED_ATTEMPTS);
    const base = {
      attempts,
      lastStatusCode: outcome.statusCode,
      retriesUsed: delivery.retriesUsed,
    };
    const logFields = {
      deliveryId: delivery.id,
      webhookId: webhook.id,
      statusCode: outcome.statusCode,
    };

    if (isSuccess(outcome.statusCode)) {
      await deliveries.completeAttempt(delivery.id, delivery.leaseId!, {
        ...base,
        status: 'succeeded',
        nextAttemptAt: null,
      });
      if (webhook.failingSince) await webhooks.clearFailing(delivery.webhookId);
      this.log.debug(logFields, 'webhook delivered');
      return;
    }
    const result: AttemptResult = { ...base, status: 'failed', nextAttemptAt: null };
    const retryDelay = delivery.manual
      ? undefined
      : this.options.retrySchedule[delivery.retriesUsed];
    if (retryDelay !== undefined && outcome.statusCode !== 410) {
      result.status = 'pending';
      result.retriesUsed = delivery.retriesUsed + 1;
      result.nextAttemptAt = new Date(Date.now() + withJitter(retryDelay, this.options.random));
    }
    await deliveries.completeAttempt(delivery.id, delivery.leaseId!, result);
    this.log.info(
      { ...logFields, error: outcome.error, retryAt: result.nextAttemptAt },
      'webhook attempt failed',
    );

    if (outcome.statusCode === 410) {
      await this.disable(delivery.webhookId, 'gone');
      return;
    }
    const failingSince = await webhooks.markFailing(delivery.webhookId, at);
    if (failingSince && at.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      await this.disable(delivery.webhookId, 'failing');
    }
  }

  /** The receiver said it is gone, or has failed for days: stop sending to it. */
  private async disable(webhookId: Types.ObjectId, reason: 'gone' | 'failing') {
    if (await this.options.webhooks.disable(webhookId, reason)) {
      await this.options.deliveries.cancelPending(webhookId);
      this.log.warn({ webhookId: webhookId.toHexString(), reason }, 'webhook disabled');
    }
  }
}
