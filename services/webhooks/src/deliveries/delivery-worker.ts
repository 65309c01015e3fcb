import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/shared';
import { Types } from 'mongoose';
import type { Webhook } from '../webhooks/webhooks.repository';
import type { Claim, Delivery, Lease } from './deliveries.repository';
import { DeliveryAttempts, type DeliveryAttemptOptions } from './delivery-attempt';
import { WebhookSends } from './webhook-sends';

/** A claimed attempt not finished this long after its timeout belongs to a dead worker. */
const LEASE_MARGIN_MS = 30_000;

export interface DeliveryWorkerOptions extends DeliveryAttemptOptions {
  /** Attempts in flight at once, across all webhooks. */
  concurrency: number;
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
  private readonly sends: WebhookSends;
  private reserved = 0;
  /** The account of the last claim: the next claim serves the account after it. */
  private lastAccountId: string | null = null;
  /**
   * Whether due deliveries may be waiting to be claimed; while they may, new ones queue behind
   * them instead of taking a free slot at once. True until a claim finds none.
   */
  private backlog = true;
  private readonly log: Logger;
  private readonly attempts: DeliveryAttempts;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.sends = new WebhookSends(
      Math.max(1, Math.ceil(options.concurrency / 4)),
      options.inOrderWindowMs,
    );
    this.log = options.logger.child({ component: 'delivery-worker' });
    this.attempts = new DeliveryAttempts(options, this.log);
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
      this.sends.queued(webhookId);
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
        this.sends.busyWebhookIds(),
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
    if (
      !this.running ||
      this.backlog ||
      this.freeSlots() <= 0 ||
      this.sends.isBusy(webhookId, now) ||
      this.sends.queuedRecently(webhookId, now)
    )
      return null;
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

  /**
   * Counts a send to the webhook; the returned function ends it (once). The next send to the
   * webhook may start when this one has its answer, while this one is still being recorded
   * (unless the answer may turn the webhook off, see `DeliveryAttempts`).
   */
  private beginSend(webhookId: Types.ObjectId): () => void {
    return this.sends.begin(webhookId, () => this.notify());
  }

  private launch(
    claim: Claim,
    delivery: Delivery,
    onSent = this.beginSend(claim.webhookId),
    webhook?: Webhook,
  ): void {
    if (!webhook) this.sends.claimedOneQueued(claim.webhookId);
    const abort = new AbortController();
    const deliveryId = delivery.id;
    const done = this.attempts
      .run(claim, delivery, abort.signal, onSent, webhook)
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
}

/** The claim of a delivery leased with `lease`. */
const claimOf = (delivery: Delivery, lease: Lease): Claim => ({
  deliveryId: new Types.ObjectId(delivery.id),
  webhookId: delivery.webhookId,
  leaseOwner: lease.owner,
});
