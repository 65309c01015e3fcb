import type { DeploymentStatusChangedEvent } from '@platform/shared';

/** Every payload's version: receivers can tell a future shape apart. */
export const PAYLOAD_VERSION = 1;

export const TEST_EVENT_TYPE = 'webhook.test';

/** The body of a `deployment.status_changed` webhook, as sent on every attempt. */
export function statusChangedBody(event: DeploymentStatusChangedEvent): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.occurredAt,
    version: PAYLOAD_VERSION,
    data: {
      deploymentId: event.deploymentId,
      serviceId: event.serviceId,
      projectId: event.projectId,
      status: event.status,
      previousStatus: event.previousStatus,
      commitHash: event.commitHash,
    },
  });
}

export function testEventBody(webhook: { id: string; projectId: string }, at: Date): string {
  return JSON.stringify({
    type: TEST_EVENT_TYPE,
    timestamp: at.toISOString(),
    version: PAYLOAD_VERSION,
    data: { webhookId: webhook.id, projectId: webhook.projectId },
  });
}
