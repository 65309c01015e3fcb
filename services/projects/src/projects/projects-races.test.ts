// Requests that race for one document or one name, over real HTTP against the real database:
// what MongoDB promises (one conditional write wins, a unique index refuses the rest with 11000)
// is what these rely on, so a stand-in that breaks a promise fails here.
import { Types } from 'mongoose';
import { TOPICS } from '@platform/shared';
import { collectMessages, waitFor } from '@platform/shared/testing';
import { deletedNameKeyOf } from '../names/name-key';
import { apiClient, buildProject, type ApiClient } from '../test/api-client';
import { startTestApp, type TestApp } from '../test/test-app';

type Collector = Awaited<ReturnType<typeof collectMessages>>;

let app: TestApp;
let collector: Collector;
let client: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
  collector = await collectMessages(app.kafka, [TOPICS.projectDeleted]);
});

afterAll(async () => {
  await collector?.stop();
  await app?.close();
});

beforeEach(() => {
  client = apiClient(app.url);
});

const storedProject = (id: string) => app.models.projects.findById(id).lean();
const ROUNDS = 30;
/**
 * Sent together, a DELETE nearly always reaches the database before a PATCH (which has a body to
 * parse); sent a tick later, nearly always after it. Odd rounds wait that tick, so both orders
 * and the close calls between them are raced.
 */
const inRound = <T>(round: number, request: () => Promise<T>) =>
  round % 2 ? new Promise((resolve) => setImmediate(resolve)).then(request) : request();

describe('a PATCH racing a DELETE of the same project', () => {
  it('is applied before the deletion or finds the project gone, never brings it back, and project.deleted goes out once', async () => {
    const projects = [];
    for (let i = 0; i < ROUNDS; i++)
      projects.push(await buildProject(client, { name: `raced ${i}` }));

    // The relay waits until the marks are checked: the cascade would remove the documents.
    await app.relay.stop();
    const rounds = [];
    for (const [i, project] of projects.entries()) {
      const [patch, del] = await Promise.all([
        client.patch(`/api/projects/${project.id}`, { name: `renamed ${i}`, description: 'raced' }),
        inRound(i, () => client.delete(`/api/projects/${project.id}`)),
      ]);
      rounds.push({ project, patch, del, get: await client.get(`/api/projects/${project.id}`) });
    }

    for (const [i, { project, patch, del, get }] of rounds.entries()) {
      expect(del.status).toBe(204);
      if (patch.status === 200) {
        expect(patch.body).toEqual({ ...project, name: `renamed ${i}`, description: 'raced' });
      } else {
        expect(patch.status).toBe(404);
        expect(patch.body).toEqual({ error: 'NOT_FOUND', message: 'Project not found.' });
      }
      expect(get.status).toBe(404);
    }
    // Deleted for good: every document keeps its mark and the key that frees its name.
    for (const { project } of rounds) {
      expect(await storedProject(project.id)).toMatchObject({
        deletedAt: expect.any(Date),
        nameKey: deletedNameKeyOf(project.id),
      });
    }
    expect(
      await app.models.projects.countDocuments({ accountId: client.accountId, deletedAt: null }),
    ).toBe(0);
    expect((await client.get('/api/projects')).body).toEqual({ projects: [] });

    // Once each: every outbox published and emptied, one message per project on the topic.
    app.relay.start();
    const ids = new Set(projects.map((p) => p.id));
    await collector.waitFor((m) => ids.has(m.key ?? ''), ROUNDS);
    await waitFor(
      async () =>
        (await app.models.projects.countDocuments({
          _id: { $in: [...ids].map((id) => new Types.ObjectId(id)) },
          $or: [{ outboxPending: true }, { 'outbox.0': { $exists: true } }],
        })) === 0,
      { what: 'every outbox to be published' },
    );
    for (const id of ids) {
      expect(collector.messages.filter((m) => m.key === id).map((m) => m.value.projectId)).toEqual([
        id,
      ]);
    }
  }, 60_000);
});

describe('ten concurrent renames of ten projects to one name', () => {
  it('rename exactly one project and answer the other nine 409 CONFLICT', async () => {
    const projects = [];
    for (let i = 0; i < 10; i++) projects.push(await buildProject(client, { name: `own ${i}` }));
    // One name in ten spellings: the names differ only in letter case, so they are one name.
    const spellings = projects.map((_, i) => (i % 2 ? 'CONTESTED' : 'Contested'));

    const responses = await Promise.all(
      projects.map((project, i) =>
        client.patch(`/api/projects/${project.id}`, { name: spellings[i] }),
      ),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    const winner = responses.findIndex((r) => r.status === 200);
    expect(responses[winner]!.body).toEqual({ ...projects[winner], name: spellings[winner] });
    responses.forEach((response, i) => {
      if (i === winner) return;
      expect(response.body).toEqual({
        error: 'CONFLICT',
        message: `A project named "${spellings[i]}" already exists.`,
      });
    });
    const stored = await app.models.projects
      .find({ accountId: client.accountId }, { name: 1, nameKey: 1 })
      .lean();
    expect(stored.filter((p) => p.nameKey === 'contested').map((p) => p._id.toHexString())).toEqual(
      [projects[winner]!.id],
    );
    for (const [i, project] of projects.entries()) {
      if (i === winner) continue;
      expect(stored.find((p) => p._id.equals(project.id))).toMatchObject({
        name: `own ${i}`,
        nameKey: `own ${i}`,
      });
    }
  });
});

describe('ten concurrent creates of one name', () => {
  it('create exactly one project and answer the other nine 409 CONFLICT', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => client.post('/api/projects', { name: 'Only once' })),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.body).toEqual({
        error: 'CONFLICT',
        message: 'A project named "Only once" already exists.',
      });
    }
    const created = responses.find((r) => r.status === 201)!.body;
    expect(await app.models.projects.find({ accountId: client.accountId }).lean()).toEqual([
      expect.objectContaining({ _id: new Types.ObjectId(created.id), nameKey: 'only once' }),
    ]);
    expect((await client.get('/api/projects')).body.projects).toEqual([
      { id: created.id, name: 'Only once', createdAt: created.createdAt },
    ]);
  });
});
