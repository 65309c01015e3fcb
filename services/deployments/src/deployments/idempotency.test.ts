import { randomUUID } from 'node:crypto';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService } from '../test/projects-stub';
import { IDEMPOTENCY_WINDOW_MS, TriggerRepository } from './trigger.repository';

const h = useHarness();

const withKey = (key: string) => ({ 'Idempotency-Key': key });

describe('POST deployments with an Idempotency-Key', () => {
  it('answers a repeat of the same request with the first response and creates nothing', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash(), commitMessage: 'Ship it' };

    const first = await h.api.trigger(service, body, withKey(key));
    const again = await h.api.trigger(service, body, withKey(key));
    const third = await h.api.trigger(service, { ...body }, withKey(key));

    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(third.body).toEqual(first.body);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(1);
  });

  it('answers the first response even after the deployment moved on', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };
    const first = await h.api.trigger(service, body, withKey(key));
    await h.api.cancel(service, first.body.id);

    const again = await h.api.trigger(service, body, withKey(key));

    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.body.status).toBe('BUILDING');
  });

  it('answers 409 CONFLICT when the key comes back with another body, and creates nothing', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    await h.api.trigger(service, { commitHash: newCommitHash() }, withKey(key));

    const otherHash = await h.api.trigger(service, { commitHash: newCommitHash() }, withKey(key));
    const otherMessage = await h.api.trigger(
      service,
      { commitHash: newCommitHash(), commitMessage: 'different' },
      withKey(key),
    );

    expect(otherHash.status).toBe(409);
    expect(otherHash.body).toEqual({
      error: 'CONFLICT',
      message: 'This Idempotency-Key was already used with a different request.',
    });
    expect(otherMessage.status).toBe(409);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(1);
  });

  it('answers 409 when the key comes back for another service of the same account', async () => {
    const service = h.projects.addService();
    const sibling = h.projects.addService({ ...service, serviceId: buildService().serviceId });
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };
    await h.api.trigger(service, body, withKey(key));

    const res = await h.api.trigger(sibling, body, withKey(key));

    expect(res.status).toBe(409);
    expect(await h.models.deployments.countDocuments({ serviceId: sibling.serviceId })).toBe(0);
  });

  it('keeps keys per account: the same key from another account is a new request', async () => {
    const mine = h.projects.addService();
    const theirs = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };

    const a = await h.api.trigger(mine, body, withKey(key));
    const b = await h.api.trigger(theirs, body, withKey(key));

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.serviceId).toBe(theirs.serviceId);
  });

  it('treats the same body in another letter case as the same request', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const hash = newCommitHash();

    const first = await h.api.trigger(service, { commitHash: hash }, withKey(key));
    const upper = await h.api.trigger(service, { commitHash: hash.toUpperCase() }, withKey(key));

    expect(upper.status).toBe(201);
    expect(upper.body).toEqual(first.body);
  });

  it('creates a new deployment when the key was first used more than 24 hours ago', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };
    const first = await h.api.trigger(service, body, withKey(key));
    await h.models.idempotencyKeys.updateOne(
      { _id: `${service.accountId}:${key}` },
      { $set: { createdAt: new Date(Date.now() - IDEMPOTENCY_WINDOW_MS - 1000) } },
    );

    const later = await h.api.trigger(service, body, withKey(key));

    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(2);
    const record = await h.models.idempotencyKeys.findById(`${service.accountId}:${key}`).lean();
    expect(record!.deploymentId.toHexString()).toBe(later.body.id);
  });

  it('creates exactly one deployment for concurrent repeats of the same request', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };

    const results = await Promise.all(
      Array.from({ length: 8 }, () => h.api.trigger(service, body, withKey(key))),
    );

    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(1);
    expect(await h.changes(results[0]!.body.id)).toEqual(['->BUILDING']);
  });

  it('creates the deployment on a repeat when the first try stopped between its key and its insert', async () => {
    const service = h.projects.addService();
    const key = randomUUID();
    const body = { commitHash: newCommitHash() };
    const first = await h.api.trigger(service, body, withKey(key));
    // As if that process had stopped right after claiming the key.
    await h.models.deployments.deleteOne({ _id: first.body.id });

    const again = await h.api.trigger(service, body, withKey(key));

    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const doc = await h.document(first.body.id);
    expect(doc).toMatchObject({ status: 'BUILDING', commitHash: body.commitHash });
    expect(doc!.createdAt.toISOString()).toBe(first.body.createdAt);
    expect(await h.changes(first.body.id)).toEqual(['->BUILDING']);
  });

  it('answers 400 VALIDATION_ERROR for a key that is too long', async () => {
    const service = h.projects.addService();

    const res = await h.api.trigger(
      service,
      { commitHash: newCommitHash() },
      withKey('k'.repeat(256)),
    );

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path: 'Idempotency-Key', message: expect.stringContaining('printable') }],
    });
    expect(await h.models.deployments.countDocuments({ serviceId: service.serviceId })).toBe(0);
  });

  it('forgets keys older than 24 hours when pruned', async () => {
    const service = h.projects.addService();
    const oldKey = randomUUID();
    const freshKey = randomUUID();
    await h.api.trigger(service, { commitHash: newCommitHash() }, withKey(oldKey));
    await h.api.trigger(service, { commitHash: newCommitHash() }, withKey(freshKey));
    await h.models.idempotencyKeys.updateOne(
      { _id: `${service.accountId}:${oldKey}` },
      { $set: { createdAt: new Date(Date.now() - IDEMPOTENCY_WINDOW_MS - 1000) } },
    );

    const keys = new TriggerRepository(h.models, h.outbox, h.repository.logs, h.config);
    const pruned = await keys.pruneExpiredKeys();

    expect(pruned).toBeGreaterThanOrEqual(1);
    expect(
      await h.models.idempotencyKeys.exists({ _id: `${service.accountId}:${oldKey}` }),
    ).toBeNull();
    expect(
      await h.models.idempotencyKeys.exists({ _id: `${service.accountId}:${freshKey}` }),
    ).not.toBeNull();
  });
});
