import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/shared';
import { Types } from 'mongoose';
import type { EgressGuard } from '../egress/egress-guard';
import { SecretUnreadableError, type WebhookSecrets } from '../webhooks/webhook-secrets';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type {
  AttemptResult,
  Claim,
  DeliveriesRepository,
  Delivery,
  Lease,
} from './deliveries.repository';
import { withJitter } from './retry-schedule';
import { isSuccess, sendWebhook, type AttemptOutcome } from './send-webhook';
import { webhookHeaders } from './signature';

/** A claimed attempt not finished this long after its timeout belongs to a dead worker. */
const LEASE_MARGIN_MS = 30_000;
/** How long a delivery queued behind a busy webhook keeps newer ones off the fast path. */
const QUEUED_BEHIND_MS = 5_000;

export interface DeliveryWorkerOptions {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  guard: EgressGuard;
  /** Opens the webhooks' sealed secrets to sign with. */
  secrets: WebhookSecrets;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  /** Attempts in flight at once, across all webhooks. */
  concurrency: number;
  /** A webhook whose every attempt failed for this long is disabled (WEBHOOK_DISABLE_AFTER). */
  disableAfterMs: number;
  logger: Logger;
  /** How often to look for due deliveries when nobody called notify(). */
  pollIntervalMs: number;
  /**
   * A webhook gets one send at a time, so a prompt receiver sees events in the order they
   * happened; once its send has taken this long, the next may start beside it (up to a quarter
   * of `concurrency`), so a slow receiver is not blocked behind its own first request.
   */
  inOrderWindowMs: number;
  /** How long stop() lets running attempts finish before aborting them. */
  stopGraceMs: number;
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

/** A slot and a lease taken for a delivery about to be recorded (see `reserve`). */
export interface Reservation {
  webhookId: Types.ObjectId;
  lease: Lease;
  onSent: () => void;
}

/** The sends to one webhook under way in this worker. */
interface WebhookSends {
  webhookId: Types.ObjectId;
  count: number;
  lastStartedAt: number;
}

/**
 * Sends due deliveries. All state is in MongoDB (a claim is an atomic lease on the delivery),
 * so several instances can run and a restart loses nothing. Attempts run concurrently
 * up to `concurrency`; one webhook never holds more than a quarter of the slots, so a slow or
 * dead receiver cannot hold up the others. Slots are shared between accounts in turn: each claim
 * takes the next account (in id order) with a due delivery, and a new delivery goes straight to a
 * free slot only while none waits, so one account's backlog does not hold up another's.
 */
export class DeliveryWorker {
  private running = false;
  private pollTimer?: NodeJS.Timeout;
  private pumpLoop?: Promise<void>;
  private pumpAgain = false;
  private claimFailing = false;
  private readonly inFlight = new Map<string, Running>();
  private readonly sending = new Map<string, WebhookSends>();
  /** Webhooks with deliveries queued here and not claimed yet: how many, and since when. */
  private readonly queuedBehind = new Map<string, { count: number; at: number }>();
  private reserved = 0;
  /** The account of the last claim: the next claim serves the account after it. */
  private lastAccountId: string | null = null;
  /**
   * Whether due deliveries may be waiting to be claimed; while they may, new ones queue behind
   * them instead of taking a free slot at once. True until a claim finds none.
   */
  private backlog = true;
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
    this.pollTimer = setInterval(() => this.notify(), this.options.pollIntervalMs).unref();
    this.notify();
  }

  /**
   * A delivery became due: look now instead of at the next poll. With `webhookId`, one was
   * queued for that webhook, and no newer one may overtake it through `reserve`.
   */
  notify(webhookId?: Types.ObjectId): void {
    if (webhookId) {
      this.backlog = true;
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
    await this.pumpLoop;
    const settled = Promise.all([...this.inFlight.values()].map((r) => r.done));
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, this.options.stopGraceMs);
    });
    await Promise.race([settled, grace]);
    clearTimeout(graceTimer);
    for (const running of this.inFlight.values()) running.abort.abort();
    await Promise.all([...this.inFlight.values()].map((r) => r.done));
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (this.running && this.freeSlots() > 0) {
        const claimed = await this.claimNext();
        if (!claimed) break;
        this.launch(claimed.claim, claimed.delivery);
      }
    } while (this.pumpAgain && this.running);
  }

  private async claimNext(): Promise<{ claim: Claim; delivery: Delivery } | null> {
    const now = new Date();
    const lease = this.newLease(now);
    try {
      const delivery = await this.options.deliveries.claimDue(
        now,
        lease,
        this.busyWebhookIds(),
        this.lastAccountId,
      );
      if (this.claimFailing) this.log.info('claiming deliveries works again');
      this.claimFailing = false;
      this.backlog = delivery !== null;
      if (!delivery) return null;
      // Deliveries of earlier versions have no account: the next claim serves the accounts.
      this.lastAccountId = delivery.accountId ?? '';
      return { claim: claimOf(delivery, lease), delivery };
    } catch (err) {
      // Logged once per outage, not at every poll.
      if (!this.claimFailing) this.log.warn({ err }, 'claiming deliveries failed');
      this.claimFailing = true;
      return null;
    }
  }

  /**
   * The fast path for a delivery being recorded right now: when a slot is free, no delivery
   * waits for one, and the webhook is not sending, takes the slot and a lease to record the
   * delivery with, so `sendNow` can send it at once, with no claim and no reload. Null: record it
   * unleased for a claim, in its account's turn.
   */
  reserve(webhookId: Types.ObjectId): Reservation | null {
    const now = Date.now();
    if (!this.running || this.backlog || this.freeSlots() <= 0 || this.isBusy(webhookId, now))
      return null;
    const key = webhookId.toHexString();
    const queued = this.queuedBehind.get(key);
    if (queued && now - queued.at < QUEUED_BEHIND_MS) return null;
    // Another instance may have claimed them; after a while the mark holds nobody back.
    if (queued) this.queuedBehind.delete(key);
    this.reserved++;
    return { webhookId, lease: this.newLease(new Date()), onSent: this.beginSend(webhookId) };
  }

  /** Sends the delivery recorded under `reservation`. */
  sendNow(reservation: Reservation, delivery: Delivery, webhook: Webhook): void {
    this.reserved--;
    const claim = claimOf(delivery, reservation.lease);
    if (!this.running) {
      reservation.onSent();
      void this.options.deliveries.release(claim, new Date()).catch(() => undefined);
      return;
    }
    this.launch(claim, delivery, reservation.onSent, webhook);
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

  /** A lease for one claim, lasting past the attempt's time limit. */
  private newLease(now: Date): Lease {
    return {
      owner: randomUUID(),
      until: new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS),
    };
  }

  /** Whether the webhook may not start another send now (see `inOrderWindowMs`). */
  private isBusy(webhookId: Types.ObjectId, now: number): boolean {
    const sends = this.sending.get(webhookId.toHexString());
    if (!sends) return false;
    return (
      sends.count >= this.perWebhookLimit ||
      now - sends.lastStartedAt < this.options.inOrderWindowMs
    );
  }

  private busyWebhookIds(): Types.ObjectId[] {
    const now = Date.now();
    return [...this.sending.values()]
      .filter((sends) => this.isBusy(sends.webhookId, now))
      .map((sends) => sends.webhookId);
  }

  /**
   * Counts a send to the webhook; the returned function ends it (once). The next send to the
   * webhook may start when this one has its answer, while this one is still being recorded
   * (unless the answer may turn the webhook off, see `attempt`).
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
    delivery: Delivery,
    onSent = this.beginSend(claim.webhookId),
    webhook?: Webhook,
  ): void {
    if (!webhook) this.claimedOneQueued(claim.webhookId.toHexString());
    const abort = new AbortController();
    const deliveryId = delivery.id;
    const done = this.attempt(claim, delivery, abort.signal, onSent, webhook)
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
    delivery: Delivery,
    signal: AbortSignal,
    onSent: () => void,
    loaded?: Webhook,
  ): Promise<void> {
    const { deliveries, webhooks } = this.options;
    // Read after the claim: a webhook turned off before it is never sent to.
    const webhook = loaded ?? (await webhooks.findById(claim.webhookId));
    if (!webhook || !webhook.enabled) {
      await deliveries.cancel(claim);
      return;
    }
    const startedAt = new Date();
    let headers: Record<string, string>;
    try {
      const secrets = this.options.secrets.signingSecrets(webhook, startedAt);
      headers = webhookHeaders(secrets, delivery.eventId, delivery.body, startedAt.getTime());
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      // The platform's fault (a key missing from the configuration), not the receiver's: the
      // attempt is recorded and retried on schedule, and never counts against the webhook.
      onSent();
      this.log.error(
        { err, deliveryId: delivery.id },
        'webhook not sent: its secret does not open',
      );
      const outcome = { statusCode: null, durationMs: 0, responseExcerpt: '', error: err.message };
      await this.record(claim, delivery, webhook, startedAt, outcome, { receiverFault: false });
      return;
    }
    const outcome = await sendWebhook({
      url: webhook.url,
      headers,
      body: delivery.body,
      timeoutMs: this.options.timeoutMs,
      guard: this.options.guard,
      signal,
    });
    // The webhook's next send may start now, unless this outcome may turn the webhook off: then
    // only once it is off, so that nothing more is sent to it from here.
    if (!this.mayTurnOff(webhook, startedAt, outcome)) onSent();
    if (signal.aborted && outcome.statusCode === null) {
      await deliveries.release(claim, new Date());
      return;
    }
    await this.record(claim, delivery, webhook, startedAt, outcome);
  }

  private mayTurnOff(webhook: Webhook, at: Date, outcome: AttemptOutcome): boolean {
    if (isSuccess(outcome.statusCode)) return false;
    if (outcome.statusCode === 410) return true;
    const failingSince = webhook.failingSince ?? at;
    return at.getTime() - failingSince.getTime() >= this.options.disableAfterMs;
  }

  private async record(
    claim: Claim,
    delivery: Delivery,
    webhook: Webhook,
    at: Date,
    outcome: AttemptOutcome,
    { receiverFault = true } = {},
  ) {
    const { deliveries, webhooks } = this.options;
    const attempt = { at, ...outcome };
    const result: AttemptResult = {
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
    const write = async (final: AttemptResult) => {
      if (!(await deliveries.recordAttempt(claim, attempt, final)))
        this.log.warn(logFields, 'attempt not recorded: its lease lapsed and was taken over');
    };

    if (isSuccess(outcome.statusCode)) {
      await write({ ...result, status: 'succeeded' });
      if (webhook.failingSince) await webhooks.clearFailing(claim.webhookId);
      this.log.debug(logFields, 'webhook delivered');
      return;
    }
    if (outcome.statusCode === 410) {
      // Off before the 410 is logged, so whoever sees it there finds the webhook off already;
      // the other pending deliveries stop after this one's outcome is written.
      const turnedOff = await webhooks.disable(claim.webhookId, 'gone');
      await write(result);
      if (turnedOff) await this.stopPending(claim.webhookId, 'gone');
      return;
    }
    const retryDelay = delivery.manual
      ? undefined
      : this.options.retrySchedule[delivery.retriesUsed];
    if (retryDelay !== undefined) {
      result.status = 'pending';
      result.retriesUsed = delivery.retriesUsed + 1;
      result.nextAttemptAt = new Date(Date.now() + withJitter(retryDelay));
    }
    await write(result);
    this.log.info(
      { ...logFields, error: outcome.error, retryAt: result.nextAttemptAt },
      'webhook attempt failed',
    );

    if (!receiverFault) return;
    if (!webhook.failingSince) await webhooks.markFailing(claim.webhookId, at);
    if (this.mayTurnOff(webhook, at, outcome)) {
      const failingSince = new Date(at.getTime() - this.options.disableAfterMs);
      if (await webhooks.disable(claim.webhookId, 'failing', failingSince))
        await this.stopPending(claim.webhookId, 'failing');
    }
  }

  private async stopPending(webhookId: Types.ObjectId, reason: 'gone' | 'failing') {
    await this.options.deliveries.cancelPending(webhookId);
    this.log.warn({ webhookId: webhookId.toHexString(), reason }, 'webhook disabled');
  }
}

/** The claim of a delivery leased with `lease`. */
const claimOf = (delivery: Delivery, lease: Lease): Claim => ({
  deliveryId: new Types.ObjectId(delivery.id),
  webhookId: delivery.webhookId,
  leaseOwner: lease.owner,
});
