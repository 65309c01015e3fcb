import { setTimeout as delay } from 'node:timers/promises';
import { Types } from 'mongoose';
import type { DeploymentStatusChangedEvent } from '@platform/shared';
import { requestJson } from '@platform/shared/testing';
import { asOwner, startHarness, newCommitHash, useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';
import { NO_LEASE } from './deployments.model';
import type { DeploymentStatus } from './status';

// No pipeline here: deployments stay BUILDING until a test moves them.
const h = useHarness();

/** Moves a deployment along as the pipeline would, without running one. */
async function recordChanges(owned: OwnedService, id: string, ...statuses: DeploymentStatus[]) {
  const repository = h.repository;
  for (const status of statuses) {
    const current = await repository.find(owned, id);
    expect(await repository.changeStatus(current!, status)).not.toBeNull();
  }
}

/** What a pipeline worker's claim does to the document: it holds it, as attempt 1. */
async function claimAsWorker(id: string, owner: string) {
  await h.models.deployments.updateOne(
    { _id: id },
    {
      $set: { leaseOwner: owner, leaseUntil: new Date(Date.now() + 60_000) },
      $inc: { attempts: 1 },
    },
  );
  return { owner, attempt: 1 };
}

/** True when every event leaves the status the one before it entered: one line of history. */
function isChain(events: DeploymentStatusChangedEvent[]): boolean {
  return events.every((e, i) => e.previousStatus === (i === 0 ? null : events[i - 1]!.status));
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface TriggerBody {
  commitHash: string;
  commitMessage?: string;
}

/** How a list shows the deployment triggered with `body` (and answered `created`), in `status`. */
function listed(
  service: OwnedService,
  body: TriggerBody,
  created: { id: string; createdAt: string },
  status: DeploymentStatus,
) {
  return {
    id: created.id,
    serviceId: service.serviceId,
    status,
    commitHash: body.commitHash.toLowerCase(),
    commitMessage: body.commitMessage ?? '',
    createdAt: created.createdAt,
  };
}

/** How a single read shows it: the same, with its logs (none yet). */
const readBack = (...args: Parameters<typeof listed>) => ({ ...listed(...args), logs: '' });

describe('POST /api/projects/:projectId/services/:serviceId/deployments', () => {
  it('answers 201 with exactly id, serviceId, status BUILDING, commitHash and createdAt', async () => {
    const service = h.projects.addService();
    const commitHash = newCommitHash();

    const res = await h.api.trigger(service, { commitHash, commitMessage: 'Fix the login page' });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'commitHash',
      'createdAt',
      'id',
      'serviceId',
      'status',
    ]);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      serviceId: service.serviceId,
      status: 'BUILDING',
      commitHash,
      createdAt: expect.stringMatching(ISO_DATE),
    });
    const doc = await h.document(res.body.id);
    expect(doc).toMatchObject({
      accountId: service.accountId,
      projectId: service.projectId,
      serviceId: service.serviceId,
      commitHash,
      commitMessage: 'Fix the login page',
      status: 'BUILDING',
      deployedAt: null,
      leaseOwner: null,
      leaseUntil: NO_LEASE,
      attempts: 0,
      handedBack: 0,
    });
    expect(doc!.createdAt.toISOString()).toBe(res.body.createdAt);
    expect(doc!.statusChangedAt).toEqual(doc!.createdAt);
    // Its logs are a document of their own, made by the pipeline when it first claims it.
    expect(doc).not.toHaveProperty('logs');
    expect(await h.models.logs.exists({ _id: res.body.id })).toBeNull();
    expect(await h.changes(res.body.id)).toEqual(['->BUILDING']);
    expect(await h.isClaimable(res.body.id)).toBe(true);
  });

  it('stores the commit hash in lower case and the commit message as "" when none is given', async () => {
    const service = h.projects.addService();

    const res = await h.api.trigger(service, { commitHash: 'ABCDEF0123456789' });

    expect(res.status).toBe(201);
    expect(res.body.commitHash).toBe('abcdef0123456789');
    const doc = await h.document(res.body.id);
    expect(doc).toMatchObject({ commitHash: 'abcdef0123456789', commitMessage: '' });
  });

  it('records the first status event, BUILDING with no previous status, in the deployment’s outbox', async () => {
    const service = h.projects.addService();
    const res = await h.api.trigger(service, { commitHash: newCommitHash() });

    const doc = await h.document(res.body.id);

    expect(doc!.outboxPending).toBe(true);
    expect(doc!.outbox).toHaveLength(1);
    expect(doc!.outbox[0]).toMatchObject({
      topic: 'deployment.status-changed',
      key: res.body.id,
      payload: {
        type: 'deployment.status_changed',
        accountId: service.accountId,
        projectId: service.projectId,
        serviceId: service.serviceId,
        deploymentId: res.body.id,
        status: 'BUILDING',
        previousStatus: null,
        commitHash: res.body.commitHash,
      },
    });
    expect(doc!.outbox[0]!.eventId).toBe(doc!.outbox[0]!.payload.eventId);
    expect(doc!.outbox[0]!.payload.occurredAt).toBe(res.body.createdAt);
  });

  it.each([
    ['a hash that is too short', { commitHash: 'abc12' }, 'commitHash'],
    ['a hash that is too long', { commitHash: 'a'.repeat(65) }, 'commitHash'],
    ['a hash that is not hexadecimal', { commitHash: 'xyz1234' }, 'commitHash'],
    ['no hash', { commitMessage: 'hello' }, 'commitHash'],
    [
      'a message over 1000 characters',
      { commitHash: 'abcdef1', commitMessage: 'm'.repeat(1001) },
      'commitMessage',
    ],
    [
      'a message with a NUL character',
      { commitHash: 'abcdef1', commitMessage: 'fix\u0000it' },
      'commitMessage',
    ],
    [
      'a message with a terminal escape',
      { commitHash: 'abcdef1', commitMessage: 'fix \u001b[2J' },
      'commitMessage',
    ],
    ['an unknown field', { commitHash: 'abcdef1', branch: 'main' }, 'branch'],
    ['an operator object', { commitHash: { $gt: '' } }, 'commitHash'],
  ])('answers 400 VALIDATION_ERROR for %s and creates nothing', async (_case, body, path) => {
    const service = h.projects.addService();

    const res = await h.api.trigger(service, body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: expect.arrayContaining([{ path, message: expect.any(String) }]),
    });
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(0);
  });

  it('answers 400 INVALID_REQUEST for a body that is not JSON', async () => {
    const service = h.projects.addService();

    const res = await requestJson(h.api.path(service), {
      method: 'POST',
      identity: asOwner(service),
      headers: { 'content-type': 'application/json' },
      body: '{"commitHash":',
    });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'INVALID_REQUEST', message: expect.any(String) });
  });

  it('answers 401 UNAUTHORIZED without the identity header and asks projects nothing', async () => {
    const service = h.projects.addService();
    const before = h.projects.calls.length;

    const res = await requestJson(h.api.path(service), {
      method: 'POST',
      body: { commitHash: 'abcdef1' },
    });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'UNAUTHORIZED', message: expect.stringMatching(/login/i) });
    expect(h.projects.calls.length).toBe(before);
  });

  it('answers 404 NOT_FOUND for another account’s service, even with an invalid body', async () => {
    const service = h.projects.addService();
    const stranger = { ...service, accountId: buildService().accountId };

    const valid = await h.api.trigger(stranger, { commitHash: 'abcdef1' });
    const invalid = await h.api.trigger(stranger, { commitHash: 'nope' });

    expect(valid.status).toBe(404);
    expect(valid.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
    expect(invalid.status).toBe(404);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(0);
  });

  it('answers 404 for a service of another project and for an unknown service', async () => {
    const service = h.projects.addService();
    const otherProject = h.projects.addService(buildService({ accountId: service.accountId }));

    const wrongProject = await h.api.trigger(
      { ...service, projectId: otherProject.projectId },
      { commitHash: 'abcdef1' },
    );
    const unknown = await h.api.trigger(buildService({ accountId: service.accountId }), {
      commitHash: 'abcdef1',
    });

    expect(wrongProject.status).toBe(404);
    expect(wrongProject.body.error).toBe('NOT_FOUND');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('NOT_FOUND');
  });

  it('answers 404 for a service whose project was deleted a moment ago', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: 'abcdef1' });
    h.projects.removeService(service);

    const trigger = await h.api.trigger(service, { commitHash: 'abcdef1' });
    const get = await h.api.get(service, created.body.id);
    const list = await h.api.list(service);

    expect([trigger.status, get.status, list.status]).toEqual([404, 404, 404]);
    expect(get.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
  });

  it('asks projects as the caller’s account and forwards the request id', async () => {
    const service = h.projects.addService();

    const res = await h.api.trigger(
      service,
      { commitHash: 'abcdef1' },
      { 'x-request-id': 'req-deploy-42' },
    );

    expect(res.status).toBe(201);
    expect(h.projects.calls).toContainEqual({
      path: `/internal/projects/${service.projectId}/services/${service.serviceId}/source`,
      accountId: service.accountId,
      requestId: 'req-deploy-42',
    });
  });

  it('answers 404 for ids that could reshape the projects URL, without asking projects', async () => {
    const service = h.projects.addService();
    const before = h.projects.calls.length;

    const res = await h.api.trigger(
      { ...service, projectId: '..%2F..%2Fx' },
      { commitHash: 'abcdef1' },
    );

    expect(res.status).toBe(404);
    expect(res.body.error).toBe('NOT_FOUND');
    expect(h.projects.calls.length).toBe(before);
  });
});

describe('when the projects service is down', () => {
  it('answers 503 SERVICE_UNAVAILABLE on every endpoint and creates nothing', async () => {
    const down = await startHarness();
    const service = down.projects.addService();
    const created = await down.api.trigger(service, { commitHash: 'abcdef1' });
    await down.projects.close();
    try {
      const responses = await Promise.all([
        down.api.trigger(service, { commitHash: 'abcdef1' }),
        down.api.list(service),
        down.api.get(service, created.body.id),
        down.api.cancel(service, created.body.id),
      ]);

      for (const res of responses) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
      }
      expect(await down.models.deployments.countDocuments({})).toBe(1);
      expect(await down.changes(created.body.id)).toEqual(['->BUILDING']);
    } finally {
      await down.close();
    }
  });
});

describe('GET /api/projects/:projectId/services/:serviceId/deployments/:deploymentId', () => {
  it('answers 200 with exactly id, serviceId, status, commitHash, commitMessage, createdAt and logs', async () => {
    const body = { commitHash: 'ABCDEF1', commitMessage: 'First' };
    const { service, id, created } = await h.newDeployment(body);

    const res = await h.api.get(service, id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual(readBack(service, body, created, 'BUILDING'));
  });

  it('answers 404 for a deployment of another service, project or account', async () => {
    const service = h.projects.addService();
    const sibling = h.projects.addService({ ...service, serviceId: buildService().serviceId });
    const created = await h.api.trigger(service, { commitHash: 'abcdef1' });

    const viaSibling = await h.api.get(sibling, created.body.id);
    const stranger = await h.api.get(
      { ...service, accountId: buildService().accountId },
      created.body.id,
    );

    expect(viaSibling.status).toBe(404);
    expect(viaSibling.body).toEqual({ error: 'NOT_FOUND', message: 'Deployment not found.' });
    expect(stranger.status).toBe(404);
  });

  it('answers the same deployment, logs included, for its id in upper case', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: 'abcdef1' });
    // The log as the pipeline makes it at its first claim, and a line of it.
    await h.repository.logs.create({ ...service, deploymentId: created.body.id });
    await h.repository.logs.append(created.body.id, 'building abcdef1\n');

    const lower = await h.api.get(service, created.body.id);
    const upper = await h.api.get(service, created.body.id.toUpperCase());
    const cancelled = await h.api.cancel(service, created.body.id.toUpperCase());

    expect(lower.body.logs).toBe('building abcdef1\n');
    expect(upper.status).toBe(200);
    expect(upper.body).toEqual(lower.body);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      id: created.body.id,
      logs: 'building abcdef1\nDeployment cancelled by its owner.\n',
    });
  });

  it.each(['not-an-id', '123', new Types.ObjectId().toHexString()])(
    'answers 404 NOT_FOUND for the unknown or malformed id %s',
    async (id) => {
      const service = h.projects.addService();

      const res = await h.api.get(service, id);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'NOT_FOUND', message: 'Deployment not found.' });
    },
  );
});

describe('GET /api/projects/:projectId/services/:serviceId/deployments', () => {
  it('lists the service’s deployments newest first with exactly the list fields and no logs', async () => {
    const service = h.projects.addService();
    const other = h.projects.addService(buildService({ accountId: service.accountId }));
    const one = { commitHash: 'aaaaaaa', commitMessage: 'one' };
    const two = { commitHash: 'bbbbbbb' };
    const first = await h.api.trigger(service, one);
    const second = await h.api.trigger(service, two);
    await h.api.trigger(other, { commitHash: 'ccccccc' });

    const res = await h.api.list(service);

    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['deployments']);
    expect(res.body.deployments).toEqual([
      listed(service, two, second.body, 'BUILDING'),
      // Newest wins: the second trigger cancelled the first, still BUILDING.
      listed(service, one, first.body, 'CANCELLED'),
    ]);
  });

  it('answers an empty list for a service without deployments', async () => {
    const service = h.projects.addService();

    const res = await h.api.list(service);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deployments: [] });
  });
});

describe('newest wins', () => {
  it('leaves exactly one of racing triggers BUILDING, the newest, and cancels the others as superseded by a newer one, each with one line', async () => {
    const service = h.projects.addService();
    const other = h.projects.addService(buildService({ accountId: service.accountId }));
    const elsewhere = await h.api.trigger(other, { commitHash: newCommitHash() });

    const created = await Promise.all(
      Array.from({ length: 12 }, () => h.api.trigger(service, { commitHash: newCommitHash() })),
    );

    expect(created.map((c) => c.status)).toEqual(Array(12).fill(201));
    const listed = (await h.api.list(service, 'limit=100')).body.deployments as {
      id: string;
      status: string;
    }[];
    expect(listed.map((d) => d.status)).toEqual(['BUILDING', ...Array(11).fill('CANCELLED')]);
    const newest = listed[0]!.id;
    for (const { id } of listed.slice(1)) {
      // Of the triggers racing to cancel it, the one that claimed it wrote its line: one line.
      expect(await h.logs(id)).toMatch(/^Deployment cancelled: superseded by [0-9a-f]{24}\.\n$/);
      expect(await h.changes(id)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
    }
    // At least the last of them was superseded by the newest.
    expect(await h.logs(listed[1]!.id)).toContain(`superseded by ${newest}`);
    // Another service of the account is not touched.
    expect((await h.api.get(other, elsewhere.body.id)).body.status).toBe('BUILDING');
  });
});

describe('POST /api/projects/:projectId/services/:serviceId/deployments/:deploymentId/cancel', () => {
  it('answers 200 with the CANCELLED deployment, then 409 CONFLICT for a second cancel', async () => {
    const body = { commitHash: 'abcdef1', commitMessage: 'Oops' };
    const { service, id, created } = await h.newDeployment(body);

    const first = await h.api.cancel(service, id);
    const second = await h.api.cancel(service, id);

    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      ...readBack(service, body, created, 'CANCELLED'),
      logs: 'Deployment cancelled by its owner.\n',
    });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      error: 'CONFLICT',
      message: 'The deployment is already CANCELLED and can no longer change.',
    });
    expect(await h.isClaimable(id)).toBe(false);
    const doc = await h.document(id);
    expect(doc).toMatchObject({ status: 'CANCELLED', deployedAt: null, leaseOwner: null });
    const events = await h.pendingEvents(id);
    expect(events.map((e) => [e.status, e.previousStatus])).toEqual([
      ['BUILDING', null],
      ['CANCELLED', 'BUILDING'],
    ]);
    expect(Date.parse(events[1]!.occurredAt)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));
    expect(events[1]!.occurredAt).toBe(doc!.statusChangedAt.toISOString());
  });

  it('lets exactly one of ten concurrent cancels win: one 200, nine 409, one CANCELLED event', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });

    const results = await Promise.all(
      Array.from({ length: 10 }, () => h.api.cancel(service, created.body.id)),
    );

    const won = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(won[0]!.body.status).toBe('CANCELLED');
    expect(refused).toHaveLength(9);
    for (const r of refused) expect(r.body.error).toBe('CONFLICT');
    expect(await h.changes(created.body.id)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
    const read = (await h.api.get(service, created.body.id)).body;
    expect(read.status).toBe('CANCELLED');
    // Those that raced to the write each said why first (all true: it is cancelled, by its owner).
    expect(read.logs).toMatch(/^(Deployment cancelled by its owner\.\n)+$/);
  });

  it('records exactly one of a cancel and the pipeline’s move on, however they race', async () => {
    const repository = h.repository;
    const service = h.projects.addService();
    for (let round = 0; round < 30; round++) {
      const created = await h.api.trigger(service, { commitHash: newCommitHash() });
      const lease = await claimAsWorker(created.body.id, `racing-worker-${round}`);
      const building = (await repository.find(service, created.body.id))!;

      // The move starts a little later each round, so the cancel reaches the database first in
      // some rounds, at the same moment in others, and last in the rest.
      const [cancel, moved] = await Promise.all([
        h.api.cancel(service, created.body.id),
        delay(round % 10).then(() => repository.changeStatus(building, 'DEPLOYING', lease)),
      ]);

      // The cancel always wins in the end: from BUILDING, or after the move from DEPLOYING.
      expect(cancel.status).toBe(200);
      expect(cancel.body.status).toBe('CANCELLED');
      const events = await h.pendingEvents(created.body.id);
      expect(isChain(events)).toBe(true);
      expect(new Set(events.map((e) => e.previousStatus)).size).toBe(events.length);
      const changes = await h.changes(created.body.id);
      expect(changes).toEqual(
        moved
          ? ['->BUILDING', 'BUILDING>DEPLOYING', 'DEPLOYING>CANCELLED']
          : ['->BUILDING', 'BUILDING>CANCELLED'],
      );
      expect(await h.document(created.body.id)).toMatchObject({
        status: 'CANCELLED',
        leaseOwner: null,
        leaseUntil: NO_LEASE,
      });
    }
  });

  it('answers 409 for a deployment that is already DEPLOYED or FAILED', async () => {
    const service = h.projects.addService();
    const deployed = await h.api.trigger(service, { commitHash: 'abcdef1' });
    await recordChanges(service, deployed.body.id, 'DEPLOYING', 'DEPLOYED');
    const failed = await h.api.trigger(service, { commitHash: 'abcdef2' });
    await recordChanges(service, failed.body.id, 'FAILED');

    const a = await h.api.cancel(service, deployed.body.id);
    const b = await h.api.cancel(service, failed.body.id);

    expect(a.status).toBe(409);
    expect(a.body.message).toBe('The deployment is already DEPLOYED and can no longer change.');
    expect(b.status).toBe(409);
    expect(b.body.message).toBe('The deployment is already FAILED and can no longer change.');
    expect(await h.changes(deployed.body.id)).toEqual([
      '->BUILDING',
      'BUILDING>DEPLOYING',
      'DEPLOYING>DEPLOYED',
    ]);
  });

  it('answers 404 for another account’s deployment and leaves it running', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: 'abcdef1' });

    const res = await h.api.cancel(
      { ...service, accountId: buildService().accountId },
      created.body.id,
    );

    expect(res.status).toBe(404);
    expect(await h.changes(created.body.id)).toEqual(['->BUILDING']);
  });
});

describe('health', () => {
  it('answers /readyz with the Mongo check when Mongo answers', async () => {
    const res = await requestJson(`${h.url}/readyz`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { mongo: 'ok' } });
  });
});
