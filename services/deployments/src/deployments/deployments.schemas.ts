import { z } from 'zod';
import { DEPLOYMENT_STATUSES, listQuery, multilineText } from '@platform/shared';
import type { Deployment, DeploymentWithLogs } from './deployment';
import { describeWaiting, type Waiting } from './account-limits';

/** `?status=FAILED,CANCELLED`: only deployments in one of these statuses (contracts.md). */
export const deploymentListQuery = listQuery.extend({
  status: z
    .string()
    // Said by the pipe too; written as a pattern so that the API document says it.
    .regex(
      new RegExp(`^(${DEPLOYMENT_STATUSES.join('|')})(,(${DEPLOYMENT_STATUSES.join('|')}))*$`),
      `must be a comma-separated list of ${DEPLOYMENT_STATUSES.join(', ')}`,
    )
    .transform((value) => value.split(','))
    .pipe(z.array(z.enum(DEPLOYMENT_STATUSES)).min(1))
    .optional()
    .describe(
      'Only deployments in one of these statuses, comma-separated (`FAILED,CANCELLED`); works with `limit` and `cursor`. An unknown status is 400 VALIDATION_ERROR.',
    ),
});

/** `GET …/:deploymentId?wait=N`: answer once final, or after N seconds (1–300). */
export const deploymentQuery = z
  .object({
    wait: z.coerce
      .number()
      .int('must be a whole number of seconds')
      .min(1, 'must be 1 to 300 seconds')
      .max(300, 'must be 1 to 300 seconds')
      .optional()
      .describe('Seconds to wait for the deployment to be final, 1 to 300; another value is 400.'),
  })
  .strict();

export const triggerBody = z
  .object({
    commitHash: z
      .string()
      .regex(/^[0-9a-fA-F]{7,64}$/, 'must be 7 to 64 hexadecimal characters')
      .transform((hash) => hash.toLowerCase()),
    commitMessage: multilineText(1000).default(''),
  })
  .strict();
export type TriggerInput = z.infer<typeof triggerBody>;

/** `Last-Event-ID` of a log stream: the last line the client has (contracts.md). */
export const logStreamHeaders = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, 'must be a line number')
    .transform(Number)
    .optional(),
});

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Printable ASCII, as the IETF Idempotency-Key draft suggests; bounded so it fits an _id. */
export const idempotencyHeaders = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 printable ASCII characters')
    .optional()
    .describe(
      'A repeat with the same key and body within 24 hours returns the first response and creates nothing; the same key with another body is 409.',
    ),
});

export interface TriggerResponse {
  id: string;
  serviceId: string;
  status: 'BUILDING';
  commitHash: string;
  createdAt: string;
}

/** Why a deployment still to build waits: its account's limit, as the API says it. */
export interface WaitingResponse extends Waiting {
  message: string;
}

export interface DeploymentListItem {
  id: string;
  serviceId: string;
  status: Deployment['status'];
  commitHash: string;
  commitMessage: string;
  createdAt: string;
  deployedAt?: string;
  waiting?: WaitingResponse;
}

export interface DeploymentResponse extends DeploymentListItem {
  logs: string;
}

/** The trigger answers with the new deployment only: no commitMessage, deployedAt or logs. */
export const toTriggerResponse = (
  d: Pick<Deployment, 'id' | 'serviceId' | 'commitHash' | 'createdAt'>,
): TriggerResponse => ({
  id: d.id,
  serviceId: d.serviceId,
  status: 'BUILDING',
  commitHash: d.commitHash,
  createdAt: d.createdAt.toISOString(),
});

export function toListItem(d: Deployment): DeploymentListItem {
  const item: DeploymentListItem = {
    id: d.id,
    serviceId: d.serviceId,
    status: d.status,
    commitHash: d.commitHash,
    commitMessage: d.commitMessage,
    createdAt: d.createdAt.toISOString(),
  };
  if (d.status === 'DEPLOYED' && d.deployedAt) item.deployedAt = d.deployedAt.toISOString();
  if (d.waiting) item.waiting = { ...d.waiting, message: describeWaiting(d.waiting) };
  return item;
}

export const toDeploymentResponse = (d: DeploymentWithLogs): DeploymentResponse => ({
  ...toListItem(d),
  logs: d.logs,
});
