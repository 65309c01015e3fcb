import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/** Kafka topics (contracts.md, Events). */
export const TOPICS = {
  deploymentStatusChanged: 'deployment.status-changed',
  projectDeleted: 'project.deleted',
  serviceDeleted: 'service.deleted',
} as const;
export type Topic = (typeof TOPICS)[keyof typeof TOPICS];
export const ALL_TOPICS: Topic[] = Object.values(TOPICS);

export const DEPLOYMENT_STATUSES = [
  'BUILDING',
  'DEPLOYING',
  'DEPLOYED',
  'FAILED',
  'CANCELLED',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/**
 * Where a status is in a deployment's life (BUILDING, then DEPLOYING, then a final one): a
 * deployment never goes back to an earlier stage, which whoever reads its changes relies on.
 */
export const DEPLOYMENT_STAGE: Readonly<Record<DeploymentStatus, 0 | 1 | 2>> = {
  BUILDING: 0,
  DEPLOYING: 1,
  DEPLOYED: 2,
  FAILED: 2,
  CANCELLED: 2,
};

const eventBase = z.object({
  eventId: z.string().uuid(),
  occurredAt: z.string().datetime(),
  accountId: z.string().min(1),
  projectId: z.string().min(1),
});

export const deploymentStatusChangedEvent = eventBase.extend({
  type: z.literal('deployment.status_changed'),
  serviceId: z.string().min(1),
  deploymentId: z.string().min(1),
  status: z.enum(DEPLOYMENT_STATUSES),
  previousStatus: z.enum(DEPLOYMENT_STATUSES).nullable(),
  commitHash: z.string(),
});

export const projectDeletedEvent = eventBase.extend({ type: z.literal('project.deleted') });

export const serviceDeletedEvent = eventBase.extend({
  type: z.literal('service.deleted'),
  serviceId: z.string().min(1),
});

export const platformEvent = z.discriminatedUnion('type', [
  deploymentStatusChangedEvent,
  projectDeletedEvent,
  serviceDeletedEvent,
]);

export type DeploymentStatusChangedEvent = z.infer<typeof deploymentStatusChangedEvent>;
export type ProjectDeletedEvent = z.infer<typeof projectDeletedEvent>;
export type ServiceDeletedEvent = z.infer<typeof serviceDeletedEvent>;
export type PlatformEvent = z.infer<typeof platformEvent>;

type WithoutStamp<E> = E extends unknown ? Omit<E, 'eventId' | 'occurredAt'> : never;

/** Stamps a new event with its id and time. */
export function newEvent<E extends PlatformEvent>(fields: WithoutStamp<E>, at = new Date()): E {
  return { ...fields, eventId: randomUUID(), occurredAt: at.toISOString() } as E;
}
