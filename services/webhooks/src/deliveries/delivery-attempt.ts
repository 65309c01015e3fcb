import type { Logger } from '@platform/shared';
import type { Types } from 'mongoose';
import type { EgressGuard } from '../egress/egress-guard';
import { SecretUnreadableError, type WebhookSecrets } from '../webhooks/webhook-secrets';
import type { Webhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import type { AttemptResult, Claim, DeliveriesRepository, Delivery } from './deliveries.repository';
import { withJitter } from './retry-schedule';
import { isSuccess, sendWebhook, type AttemptOutcome } from './send-webhook';
import { webhookHeaders } from './signature';

export interface DeliveryAttemptOptions {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  guard: EgressGuard;
  /** Opens the webhooks' sealed secrets to sign with. */
  secrets: WebhookSecrets;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  /** A webhook whose every attempt failed for this long is disabled (WEBHOOK_DISABLE_AFTER). */
  disableAfterMs: number;
}

/**
 * One attempt at a claimed delivery: signs and sends it, then writes its outcome under the claim
 * (succeeded, a retry on schedule, or failed), and turns off a webhook that answered 410 or has
 * failed for `disableAfterMs`.
 */
export class DeliveryAttempts {
  constructor(
    private readonly options: DeliveryAttemptOptions,
    private readonly log: Logger,
  ) {}

  /**
   * Sends one claimed delivery and records its outcome. `onSent` ends the webhook's send (see
   * `DeliveryWorker`); `loaded` is the webhook when the fast path already has it.
   */
  async run(
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
