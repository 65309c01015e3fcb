import type { Types } from 'mongoose';

/** How long a delivery queued behind a busy webhook keeps newer ones off the fast path. */
const QUEUED_BEHIND_MS = 5_000;

/** The sends to one webhook under way in this worker. */
interface Sends {
  webhookId: Types.ObjectId;
  count: number;
  lastStartedAt: number;
}

/**
 * The order a worker keeps per webhook: the sends to each webhook under way here (one at a time
 * while its receiver answers promptly, at most `perWebhookLimit`), and the deliveries queued for
 * a webhook and not claimed yet, which no newer one may overtake on the fast path.
 */
export class WebhookSends {
  private readonly sending = new Map<string, Sends>();
  /** Webhooks with deliveries queued here and not claimed yet: how many, and since when. */
  private readonly queuedBehind = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly perWebhookLimit: number,
    /** See `DeliveryWorkerOptions.inOrderWindowMs`. */
    private readonly inOrderWindowMs: number,
  ) {}

  /** A delivery was queued for the webhook: newer ones wait behind it. */
  queued(webhookId: Types.ObjectId): void {
    const key = webhookId.toHexString();
    this.queuedBehind.set(key, {
      count: (this.queuedBehind.get(key)?.count ?? 0) + 1,
      at: Date.now(),
    });
  }

  /** Whether a delivery queued for the webhook a moment ago waits for its claim. */
  queuedRecently(webhookId: Types.ObjectId, now: number): boolean {
    const key = webhookId.toHexString();
    const queued = this.queuedBehind.get(key);
    if (queued && now - queued.at < QUEUED_BEHIND_MS) return true;
    // Another instance may have claimed them; after a while the mark holds nobody back.
    if (queued) this.queuedBehind.delete(key);
    return false;
  }

  claimedOneQueued(webhookId: Types.ObjectId): void {
    const key = webhookId.toHexString();
    const queued = this.queuedBehind.get(key);
    if (queued && --queued.count <= 0) this.queuedBehind.delete(key);
  }

  /** Whether the webhook may not start another send now (see `inOrderWindowMs`). */
  isBusy(webhookId: Types.ObjectId, now: number): boolean {
    const sends = this.sending.get(webhookId.toHexString());
    if (!sends) return false;
    return sends.count >= this.perWebhookLimit || now - sends.lastStartedAt < this.inOrderWindowMs;
  }

  busyWebhookIds(): Types.ObjectId[] {
    const now = Date.now();
    return [...this.sending.values()]
      .filter((sends) => this.isBusy(sends.webhookId, now))
      .map((sends) => sends.webhookId);
  }

  /**
   * Counts a send to the webhook; the returned function ends it (once), then calls `ended`.
   */
  begin(webhookId: Types.ObjectId, ended: () => void): () => void {
    const key = webhookId.toHexString();
    const sends = this.sending.get(key) ?? { webhookId, count: 0, lastStartedAt: 0 };
    sends.count++;
    sends.lastStartedAt = Date.now();
    this.sending.set(key, sends);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--sends.count === 0) this.sending.delete(key);
      ended();
    };
  }
}
