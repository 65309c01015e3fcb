import {
  TOPICS,
  createProducer,
  newEvent,
  type PlatformEvent,
  type ProjectDeletedEvent,
  type ServiceDeletedEvent,
} from '@platform/shared';
import { waitFor } from '@platform/shared/testing';
import type { Producer } from 'kafkajs';
import { newCommitHash, useHarness } from '../test/harness';
import { allStopped, useFixtureSteps } from '../test/processes';
import { buildService, type OwnedService } from '../test/projects-stub';

// The cleanup consumer is compose's own, in a group of this file's (the harness's KAFKA_GROUP_ID).
const steps = useFixtureSteps();
const h = useHarness({
  pipeline: {
    TEST_BUILD: `case "$COMMIT_MESSAGE" in slow*) ${steps.longStep} ;; *) echo built ;; esac`,
  },
});
let producer: Producer;

beforeAll(async () => {
  producer = createProducer(h.kafka);
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
});

async function publish(topic: string, key: string, event: PlatformEvent) {
  await producer.send({ topic, messages: [{ key, value: JSON.stringify(event) }] });
}

const projectDeleted = (s: OwnedService) =>
  newEvent<ProjectDeletedEvent>({
    type: 'project.deleted',
    accountId: s.accountId,
    projectId: s.projectId,
  });

const serviceDeleted = (s: OwnedService) =>
  newEvent<ServiceDeletedEvent>({
    type: 'service.deleted',
    accountId: s.accountId,
    projectId: s.projectId,
    serviceId: s.serviceId,
  });

async function deploymentsOf(s: OwnedService) {
  return h.models.deployments.countDocuments({ serviceId: s.serviceId });
}

describe('project.deleted and service.deleted', () => {
  it('removes every deployment of a deleted project, with its logs, and nothing of other projects', async () => {
    const api = h.projects.addService();
    const web = h.projects.addService({ ...api, serviceId: buildService().serviceId });
    const otherProject = h.projects.addService(buildService({ accountId: api.accountId }));
    const services = [api, api, web, otherProject];
    const created = [];
    // One after the other (a newer deployment cancels one still BUILDING); each runs, so each
    // has its logs document too.
    for (const s of services) {
      const res = await h.api.trigger(s, { commitHash: newCommitHash() });
      expect(res.status).toBe(201);
      created.push(res.body.id as string);
      await h.waitForStatus(s, res.body.id, 'DEPLOYED');
    }

    h.projects.removeProject(api.projectId);
    await publish(TOPICS.projectDeleted, api.projectId, projectDeleted(api));

    const leftOf = async (projectId: string) => ({
      deployments: await h.models.deployments.countDocuments({ projectId }),
      logs: await h.models.logs.countDocuments({ projectId }),
    });
    await waitFor(
      async () => {
        const left = await leftOf(api.projectId);
        return left.deployments + left.logs === 0;
      },
      { what: 'every document of the project to go' },
    );
    expect(await leftOf(otherProject.projectId)).toEqual({ deployments: 1, logs: 1 });
  });

  it('removes the deployments of a deleted service, with their logs, and keeps its siblings’', async () => {
    const doomed = h.projects.addService();
    const sibling = h.projects.addService({ ...doomed, serviceId: buildService().serviceId });
    const gone = await h.api.trigger(doomed, { commitHash: newCommitHash() });
    const kept = await h.api.trigger(sibling, { commitHash: newCommitHash() });
    await h.waitForStatus(doomed, gone.body.id, 'DEPLOYED');
    await h.waitForStatus(sibling, kept.body.id, 'DEPLOYED');

    h.projects.removeService(doomed);
    await publish(TOPICS.serviceDeleted, doomed.serviceId, serviceDeleted(doomed));

    await waitFor(
      async () =>
        (await deploymentsOf(doomed)) === 0 && !(await h.models.logs.exists({ _id: gone.body.id })),
      { what: 'the service’s deployments and logs to go' },
    );
    expect(await deploymentsOf(sibling)).toBe(1);
    expect(await h.logs(kept.body.id)).toContain('built');
  });

  it('handles a redelivered event once and a repeat of the deletion harmlessly', async () => {
    const service = h.projects.addService();
    await h.api.trigger(service, { commitHash: newCommitHash() });
    const event = projectDeleted(service);
    h.projects.removeProject(service.projectId);
    await publish(TOPICS.projectDeleted, service.projectId, event);
    await waitFor(async () => (await deploymentsOf(service)) === 0, {
      what: 'the deployments to go',
    });
    // Handled once per eventId: a redelivery is skipped, so this stand-in deployment of the same
    // project (the real API answers 404 there by now) is left alone.
    const later = h.projects.addService({ ...service, serviceId: buildService().serviceId });
    const kept = await h.api.trigger(later, { commitHash: newCommitHash() });
    const marker = h.projects.addService();
    const markerDeployment = await h.api.trigger(marker, { commitHash: newCommitHash() });
    // Both projects deleted as far as the projects service is concerned.
    h.projects.removeProject(service.projectId);
    h.projects.removeProject(marker.projectId);

    await publish(TOPICS.projectDeleted, service.projectId, event);
    await publish(TOPICS.projectDeleted, marker.projectId, projectDeleted(marker));
    await waitFor(async () => (await h.document(markerDeployment.body.id)) === null, {
      what: 'the marker event to be handled',
    });

    expect(await h.document(kept.body.id)).not.toBeNull();
    const processed = () =>
      h.connection
        .collection('processed_events')
        .countDocuments({ _id: `${h.config.KAFKA_GROUP_ID}:${event.eventId}` as any });
    await waitFor(async () => (await processed()) > 0, { what: 'the event to be recorded' });
    expect(await processed()).toBe(1);
  });

  it('stops the running build of a deployment whose project was deleted', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, {
      commitHash: newCommitHash(),
      commitMessage: 'slow build',
    });
    const pids = await steps.pidsOf(created.body.id);

    h.projects.removeProject(service.projectId);
    await publish(TOPICS.projectDeleted, service.projectId, projectDeleted(service));

    const gone = async () =>
      (await h.document(created.body.id)) === null &&
      (await h.models.logs.exists({ _id: created.body.id })) === null;
    await waitFor(gone, { what: 'the deployment and its logs to go' });
    expect(pids).toHaveLength(2);
    await waitFor(() => allStopped(pids), { timeoutMs: 5_000, what: 'the build to stop' });
    // The worker wrote nothing back: once its run is over (stop() waits for every run), the
    // document and its logs are still gone.
    await h.worker!.stop();
    h.worker!.start();
    expect(await gone()).toBe(true);
  });

  it('deletes nothing for a deletion the projects service does not confirm, or of another account', async () => {
    const live = h.projects.addService();
    const sibling = h.projects.addService({ ...live, serviceId: buildService().serviceId });
    const kept = await h.api.trigger(live, { commitHash: newCommitHash() });
    const alsoKept = await h.api.trigger(sibling, { commitHash: newCommitHash() });
    // The project is deleted for another account (which never owned it): nothing of this one's.
    const stranger = buildService();
    const marker = h.projects.addService();
    const markerDeployment = await h.api.trigger(marker, { commitHash: newCommitHash() });
    h.projects.removeProject(marker.projectId);

    await publish(TOPICS.projectDeleted, live.projectId, projectDeleted(live));
    await publish(TOPICS.serviceDeleted, live.serviceId, serviceDeleted(live));
    await publish(
      TOPICS.projectDeleted,
      live.projectId,
      projectDeleted({ ...live, accountId: stranger.accountId }),
    );
    await publish(TOPICS.projectDeleted, marker.projectId, projectDeleted(marker));
    // Events of one key are handled in order; the marker's, last, shows the others were handled.
    await waitFor(async () => (await h.document(markerDeployment.body.id)) === null, {
      what: 'the marker event to be handled',
    });

    expect(await h.document(kept.body.id)).not.toBeNull();
    expect(await h.document(alsoKept.body.id)).not.toBeNull();
    expect(await deploymentsOf(live)).toBe(1);
  });
});
