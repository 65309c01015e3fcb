import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/shared';
import { Types } from 'mongoose';
import type { EgressGuard } from '../egress/egress-guard';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type { AttemptResult, Claim, DeliveriesRepository, Delivery } from './deliveries.repository';
import { withJitter } from './retry-schedule';
import { isSuccess, sendWebhook, type AttemptOutcome } from './send-webhook';
import { webhookHeaders } from './signature';

const mongooseId = (id: string) => new Types.ObjectId(id);

/** Attempts kept in a delivery's log (redeliveries can add more). */
export const MAX_LOGGED_ATTEMPTS = 50;
/** A claimed attempt not finished this long after its timeout belongs to a dead worker. */
const LEASE_MARGIN_MS = 30_000;
const HOUR_MS = 3_600_000;
/** How long a delivery queued behind a busy webhook keeps newer ones off the fast path. */
const QUEUED_BEHIND_MS = 5_000;

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
  /** Finished deliveries are deleted this long after their last change. */
  retentionMs: number;
  logger: Logger;
  /** How often to look for due deliveries when nobody called notify(). */
  pollIntervalMs?: number;
  /** How often to requeue deliveries a crash left without a queue entry, and apply retention. */
  housekeepingIntervalMs?: number;
  /**
   * A webhook gets one send at a time, so a prompt receiver sees events in the order they
   * happened; once its send has taken this long, the next may start beside it (up to a quarter
   * of `concurrency`), so a slow receiver is not blocked behind its own first request.
   */
  inOrderWindowMs?: number;
  /** How long stop() lets running attempts finish before aborting them. */
  stopGraceMs?: number;
  random?: () => number;
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

/** A slot and a lease taken for a delivery about to be recorded (see `reserve`). */
export interface Reservation {
  webhookId: Types.ObjectId;
  leaseId: string;
  leaseUntil: Date;
  onSent: () => void;
}

/** The sends to one webhook under way in this worker. */
interface WebhookSends {
  webhookId: Types.ObjectId;
  count: number;
  lastStartedAt: number;
}

/**
 * Sends due deliveries. All state is in MongoDB (a claim is an atomic lease on the queue
 * entry), so several instances can run and a restart loses nothing. Attempts run concurrently
 * up to `concurrency`; one webhook never holds more than a quarter of the slots, so a slow or
 * dead receiver cannot hold up the others.
 */
export class DeliveryWorker {
  private running = false;
  private pollTimer?: NodeJS.Timeout;
  private housekeepingTimer?: NodeJS.Timeout;
  private pumpLoop?: Promise<void>;
  private pumpAgain = false;
  private claimFailing = false;
  private readonly inFlight = new Map<string, Running>();
  private readonly sending = new Map<string, WebhookSends>();
  /** Webhooks with deliveries queued here and not claimed yet: how many, and since when. */
  private readonly queuedBehind = new Map<string, { count: number; at: number }>();
  private reserved = 0;
  private readonly perWebhookLimit: number;
  private readonly log: Logger;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.perWebhookLimit = Math.max(1, Math.ceil(options.concurrency / 4));
    this.log = options.logger.child({ component: 'delivery-worker' });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Unref'd: the HTTP server keeps the process alive, the worker alone must not.
    this.pollTimer = setInterval(() => this.notify(), this.options.pollIntervalMs ?? 250).unref();
    this.housekeepingTimer = setInterval(
      () => void this.housekeeping(),
      this.options.housekeepingIntervalMs ?? HOUR_MS,
    ).unref();
    void this.housekeeping();
    this.notify();
  }

  /**
   * A delivery became due: look now instead of at the next poll. With `webhookId`, one was
   * queued for that webhook, and no newer one may overtake it through `reserve`.
   */
  notify(webhookId?: Types.ObjectId): void {
    if (webhookId) {
      const key = webhookId.toHexString();
      this.queuedBehind.set(key, {
        count: (this.queuedBehind.get(key)?.count ?? 0) + 1,
        at: Date.now(),
      });
    }
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
    clearInterval(this.pollTimer);
    clearInterval(this.housekeepingTimer);
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

  /**
   * Puts back pending deliveries that a crash left without a queue entry, and deletes finished
   * deliveries past retention. Both scan the delivery log, hence rarely.
   */
  async housekeeping(): Promise<void> {
    try {
      const now = new Date();
      const requeued = await this.options.deliveries.requeueOrphans(now);
      const deleted = await this.options.deliveries.deleteFinishedBefore(
        new Date(now.getTime() - this.options.retentionMs),
      );
      if (requeued + deleted > 0) this.log.info({ requeued, deleted }, 'delivery housekeeping');
      if (requeued > 0) this.notify();
    } catch (err) {
      this.log.warn({ err }, 'delivery housekeeping failed');
    }
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (this.running && this.freeSlots() > 0) {
        const claim = await this.claimNext();
        if (!claim) break;
        this.launch(claim);
      }
    } while (this.pumpAgain && this.running);
  }

  private async claimNext(): Promise<Claim | null> {
    const now = new Date();
    try {
      const claim = await this.options.deliveries.claimDue(
        now,
        this.leaseUntil(now),
        randomUUID(),
        this.busyWebhookIds(),
      );
      if (this.claimFailing) this.log.info('claiming deliveries works again');
      this.claimFailing = false;
      return claim;
    } catch (err) {
      // Logged once per outage, not at every poll.
      if (!this.claimFailing) this.log.warn({ err }, 'claiming deliveries failed');
      this.claimFailing = true;
      return null;
    }
  }

  /**
   * The fast path for a delivery being recorded right now: when a slot is free and the webhook
   * is not sending, takes both and a lease to write into the new queue entry, so `sendNow` can
   * send it at once, with no claim and no reload. Null: record it unleased for a claim.
   */
  reserve(webhookId: Types.ObjectId): Reservation | null {
    const now = Date.now();
    if (!this.running || this.freeSlots() <= 0 || this.isBusy(webhookId, now)) return null;
    const key = webhookId.toHexString();
    const queued = this.queuedBehind.get(key);
    if (queued && now - queued.at < QUEUED_BEHIND_MS) return null;
    // Another instance may have claimed them; after a while the mark holds nobody back.
    if (queued) this.queuedBehind.delete(key);
    this.reserved++;
    return {
      webhookId,
      leaseId: randomUUID(),
      leaseUntil: this.leaseUntil(new Date()),
      onSent: this.beginSend(webhookId),
    };
  }

  /** Sends the delivery recorded under `reservation`. */
  sendNow(reservation: Reservation, delivery: Delivery, webhook: Webhook): void {
    this.reserved--;
    const claim: Claim = {
      deliveryId: mongooseId(delivery.id),
      webhookId: reservation.webhookId,
      leaseId: reservation.leaseId,
    };
    if (!this.running) {
      reservation.onSent();
      void this.options.deliveries.reschedule(claim, new Date()).catch(() => undefined);
      return;
    }
    this.launch(claim, reservation.onSent, { delivery, webhook });
  }

  /** Gives back a reservation whose delivery was not recorded (a duplicate, or an error). */
  release(reservation: Reservation): void {
    this.reserved--;
    reservation.onSent();
  }

  private claimedOneQueued(key: string): void {
    const queued = this.queuedBehind.get(key);
    if (queued && --queued.count <= 0) this.queuedBehind.delete(key);
  }

  private freeSlots(): number {
    return this.options.concurrency - this.inFlight.size - this.reserved;
  }

  private leaseUntil(now: Date): Date {
    return new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS);
  }

  /** Whether the webhook may not start another send now (see `inOrderWindowMs`). */
  private isBusy(webhookId: Types.ObjectId, now: number): boolean {
    const sends = this.sending.get(webhookId.toHexString());
    if (!sends) return false;
    const window = this.options.inOrderWindowMs ?? 1_000;
    return sends.count >= this.perWebhookLimit || now - sends.lastStartedAt < window;
  }

  private busyWebhookIds(): Types.ObjectId[] {
    const now = Date.now();
    return [...this.sending.values()]
      .filter((sends) => this.isBusy(sends.webhookId, now))
      .map((sends) => sends.webhookId);
  }

  /**
   * Counts a send to the webhook; the returned function ends it (once). The next send to the
   * webhook may start when this one has its answer, while this one is still being recorded.
   */
  private beginSend(webhookId: Types.ObjectId): () => void {
    const key = webhookId.toHexString();
    const sends = this.sending.get(key) ?? { webhookId, count: 0, lastStartedAt: 0 };
    sends.count++;
    sends.lastStartedAt = Date.now();
    this.sending.set(key, sends);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--sends.count === 0) this.sending.delete(key);
      this.notify();
    };
  }

  private launch(
    claim: Claim,
    onSent = this.beginSend(claim.webhookId),
    loaded?: { delivery: Delivery; webhook: Webhook },
  ): void {
    if (!loaded) this.claimedOneQueued(claim.webhookId.toHexString());
    const abort = new AbortController();
    const deliveryId = claim.deliveryId.toHexString();
    const done = this.attempt(claim, abort.signal, onSent, loaded)
      .catch((err: unknown) => {
        // The lease runs out and another attempt follows.
        this.log.error({ err, deliveryId }, 'delivery attempt could not be recorded');
      })
      .finally(() => {
        onSent();
        this.inFlight.delete(deliveryId);
        this.notify();
      });
    this.inFlight.set(deliveryId, { abort, done });
  }

  private async attempt(
    claim: Claim,
    signal: AbortSignal,
    onSent: () => void,
    loaded?: { delivery: Delivery; webhook: Webhook },
  ): Promise<void> {
    const { deliveries, webhooks } = this.options;
    const [delivery, webhook] = loaded
      ? [loaded.delivery, loaded.webhook]
      : await Promise.all([
          deliveries.findById(claim.deliveryId),
          webhooks.findById(claim.webhookId),
        ]);
    if (!delivery || delivery.status !== 'pending') {
      await deliveries.dequeue(claim);
      return;
    }
    if (!webhook || !webhook.enabled) {
      await deliveries.cancel(claim);
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
    onSent();
    if (signal.aborted && outcome.statusCode === null) {
      await deliveries.reschedule(claim, new Date());
      return;
    }
    await this.record(claim, delivery, webhook, startedAt, outcome);
  }

  private async record(
    claim: Claim,
    delivery: Delivery,
    webhook: Webhook,
    at: Date,
    outcome: AttemptOutcome,
  ) {
    const { deliveries, webhooks } = this.options;
    const attempts = [...delivery.attempts, { at, ...outcome }].slice(-MAX_LOGGED_ATTEMPTS);
    const result: AttemptResult = {
      attempts,
      lastStatusCode: outcome.statusCode,
      retriesUsed: delivery.retriesUsed,
      status: 'failed',
      nextAttemptAt: null,
    };
    const logFields = {
      deliveryId: delivery.id,
      webhookId: webhook.id,
      statusCode: outcome.statusCode,
    };

    if (isSuccess(outcome.statusCode)) {
      await deliveries.recordAttempt(claim.deliveryId, { ...result, status: 'succeeded' });
      await deliveries.dequeue(claim);
      if (webhook.failingSince) await webhooks.setFailingSince(claim.webhookId, null);
      this.log.debug(logFields, 'webhook delivered');
      return;
    }
    if (outcome.statusCode === 410) {
      // Off before the 410 is logged, so whoever sees it there finds the webhook off already;
      // the other pending deliveries stop after this one's outcome is written.
      const turnedOff = await webhooks.disable(claim.webhookId, 'gone');
      await deliveries.recordAttempt(claim.deliveryId, result);
      await deliveries.dequeue(claim);
      if (turnedOff) await this.stopPending(claim.webhookId, 'gone');
      return;
    }
    const retryDelay = delivery.manual
      ? undefined
      : this.options.retrySchedule[delivery.retriesUsed];
    if (retryDelay !== undefined) {
      result.status = 'pending';
      result.retriesUsed = delivery.retriesUsed + 1;
      result.nextAttemptAt = new Date(Date.now() + withJitter(retryDelay, this.options.random));
    }
    await deliveries.recordAttempt(claim.deliveryId, result);
    if (result.nextAttemptAt) await deliveries.reschedule(claim, result.nextAttemptAt);
    else await deliveries.dequeue(claim);
    this.log.info(
      { ...logFields, error: outcome.error, retryAt: result.nextAttemptAt },
      'webhook attempt failed',
    );

    const failingSince = webhook.failingSince ?? at;
    if (!webhook.failingSince) await webhooks.setFailingSince(claim.webhookId, at);
    if (at.getTime() - failingSince.getTime() >= this.options.disableAfterMs) {
      await this.disable(claim.webhookId, 'failing');
    }
  }

  /** The receiver has failed for days: stop sending to it. */
  private async disable(webhookId: Types.ObjectId, reason: 'failing') {
    if (await this.options.webhooks.disable(webhookId, reason))
      await this.stopPending(webhookId, reason);
  }

  private async stopPending(webhookId: Types.ObjectId, reason: 'gone' | 'failing') {
    await this.options.deliveries.cancelPending(webhookId, new Date());
    this.log.warn({ webhookId: webhookId.toHexString(), reason }, 'webhook disabled');
  }
}
