import { z } from 'zod';
import type { DeliveryStatus } from './deliveries.model';
import type { Delivery, DeliveryListItem } from './deliveries.repository';

/** The actions (test send, redelivery) take no input; a body, if any, must be `{}`. */
export const noInputBody = z.object({}).strict().optional();

/** Without `limit`, a delivery log shows its newest 20 entries. */
export const DEFAULT_DELIVERY_PAGE = 20;

export interface DeliverySummary {
  id: string;
  eventId: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

export interface AttemptView {
  at: string;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string;
  error: string | null;
}

export interface DeliveryDetail extends DeliverySummary {
  /** The body sent on every attempt, parsed. */
  payload: unknown;
  attemptLog: AttemptView[];
}

export function deliverySummary(delivery: DeliveryListItem): DeliverySummary {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attemptCount,
    lastStatusCode: delivery.lastStatusCode,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    createdAt: delivery.createdAt.toISOString(),
  };
}

export function deliveryDetail(delivery: Delivery): DeliveryDetail {
  return {
    ...deliverySummary(delivery),
    payload: JSON.parse(delivery.body) as unknown,
    attemptLog: delivery.attempts.map((attempt) => ({
      at: attempt.at.toISOString(),
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      responseExcerpt: attempt.responseExcerpt,
      error: attempt.error,
    })),
  };
}
