// A service's `url`: null until a deployment of it is DEPLOYED, then APPS_URL_TEMPLATE with its
// id, set by the consumer of deployment.status-changed from real events on Kafka.
import { Types } from 'mongoose';
import {
  createProducer,
  newEvent,
  TOPICS,
  type DeploymentStatus,
  type DeploymentStatusChangedEvent,
} from '@platform/shared';
import { useRunning, waitFor } from '@platform/shared/testing';
import { buildAccountService, type ApiClient } from '../test/api-client';
import { startTestApp } from '../test/test-app';

const app = useRunning(() =>
  startTestApp({ APPS_URL_TEMPLATE: 'https://{serviceId}.apps.example.test' }),
);
let client: ApiClient;
let projectId: string;
let serviceId: string;

beforeEach(async () => {
  ({ client, projectId, serviceId } = await buildAccountService(app().url));
});

const serviceNow = async () =>
  (await client.get(`/api/projects/${projectId}/services/${serviceId}`)).body;

function statusEvent(
  status: DeploymentStatus,
  overrides: Partial<DeploymentStatusChangedEvent> = {},
  at = new Date(),
) {
  return newEvent<DeploymentStatusChangedEvent>(
    {
      type: 'deployment.status_changed',
      accountId: client.accountId,
      projectId,
      serviceId,
      deploymentId: new Types.ObjectId().toHexString(),
      status,
      previousStatus: 'DEPLOYING',
      commitHash: 'abcdef1',
      ...overrides,
    },
    at,
  );
}

/** Publishes the events on the real topic and waits until the consumer has handled all of them. */
async function deliver(...events: DeploymentStatusChangedEvent[]) {
  const producer = createProducer(app().kafka);
  await producer.connect();
  try {
    for (const event of events) {
      await producer.send({
        topic: TOPICS.deploymentStatusChanged,
        messages: [{ key: event.deploymentId, value: JSON.stringify(event) }],
      });
    }
  } finally {
    await producer.disconnect();
  }
  const ids = events.map((e) => `${app().groupId}:${e.eventId}`);
  await waitFor(
    async () =>
      (await app()
        .connection.collection('processed_events')
        .countDocuments({ _id: { $in: ids } as never })) === ids.length,
    { timeoutMs: 15_000, what: 'the events to be handled' },
  );
}

const stored = () => app().models.services.findById(serviceId).lean();

describe("a service's url", () => {
  it('is null until a deployment is DEPLOYED, then the stable URL of the service', async () => {
    expect((await serviceNow()).url).toBeNull();
    await deliver(statusEvent('BUILDING', { previousStatus: null }), statusEvent('DEPLOYING'));
    expect((await serviceNow()).url).toBeNull();

    const deployed = statusEvent('DEPLOYED');
    await deliver(deployed);

    expect((await serviceNow()).url).toBe(`https://${serviceId}.apps.example.test`);
    expect(await stored()).toMatchObject({ liveDeploymentId: deployed.deploymentId });
  });

  it('stays the same URL, pointing at the newest DEPLOYED, even when an older one arrives late', async () => {
    const older = statusEvent('DEPLOYED', {}, new Date(Date.now() - 60_000));
    const newer = statusEvent('DEPLOYED');

    await deliver(newer, older);

    expect((await serviceNow()).url).toBe(`https://${serviceId}.apps.example.test`);
    expect(await stored()).toMatchObject({ liveDeploymentId: newer.deploymentId });
  });

  it('is not set by a DEPLOYED naming another account or project', async () => {
    await deliver(
      statusEvent('DEPLOYED', { accountId: 'someone-else' }),
      statusEvent('DEPLOYED', { projectId: new Types.ObjectId().toHexString() }),
    );

    expect((await serviceNow()).url).toBeNull();
    expect(await stored()).toMatchObject({ liveDeploymentId: null });
  });

  it('is not set on a deleted service', async () => {
    await client.delete(`/api/projects/${projectId}/services/${serviceId}`);

    await deliver(statusEvent('DEPLOYED'));

    // The cascade may already have removed it; if not, it has no url.
    expect((await stored())?.url ?? null).toBeNull();
  });
});
