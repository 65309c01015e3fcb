// Requests that race for one service or one name within a project, over real HTTP against the
// real database (see projects-races.test.ts).
import { Types } from 'mongoose';
import { TOPICS } from '@platform/shared';
import { collectMessages, waitFor } from '@platform/shared/testing';
import { deletedNameKeyOf } from '../names/name-key';
import {
  apiClient,
  buildProject,
  buildService,
  type ApiClient,
  type ProjectBody,
} from '../test/api-client';
import { startTestApp, type TestApp } from '../test/test-app';

type Collector = Awaited<ReturnType<typeof collectMessages>>;

let app: TestApp;
let collector: Collector;
let client: ApiClient;
let project: ProjectBody;

beforeAll(async () => {
  app = await startTestApp();
  collector = await collectMessages(app.kafka, [TOPICS.serviceDeleted]);
});

afterAll(async () => {
  await collector?.stop();
  await app?.close();
});

beforeEach(async () => {
  client = apiClient(app.url);
  project = await buildProject(client);
});

const servicesPath = () => `/api/projects/${project.id}/services`;
const ROUNDS = 30;
/**
 * Sent together, a DELETE nearly always reaches the database before a PATCH (which has a body to
 * parse); sent a tick later, nearly always after it. Odd rounds wait that tick, so both orders
 * and the close calls between them are raced.
 */
const inRound = <T>(round: number, request: () => Promise<T>) =>
  round % 2 ? new Promise((resolve) => setImmediate(resolve)).then(request) : request();

describe('a PATCH racing a DELETE of the same service', () => {
  it('is applied before the deletion or finds the service gone, never brings it back, and service.deleted goes out once', async () => {
    const services = [];
    for (let i = 0; i < ROUNDS; i++)
      services.push(await buildService(client, project.id, { name: `raced ${i}` }));

    // The relay waits until the marks are checked: the cascade would remove the documents.
    await app.relay.stop();
    const rounds = [];
    for (const [i, service] of services.entries()) {
      const path = `${servicesPath()}/${service.id}`;
      const [patch, del] = await Promise.all([
        client.patch(path, { name: `renamed ${i}` }),
        inRound(i, () => client.delete(path)),
      ]);
      rounds.push({ service, patch, del, get: await client.get(path) });
    }

    for (const [i, { service, patch, del, get }] of rounds.entries()) {
      expect(del.status).toBe(204);
      if (patch.status === 200) {
        expect(patch.body).toEqual({ ...service, name: `renamed ${i}` });
      } else {
        expect(patch.status).toBe(404);
        expect(patch.body).toEqual({ error: 'NOT_FOUND', message: 'Service not found.' });
      }
      expect(get.status).toBe(404);
    }
    for (const { service } of rounds) {
      expect(await app.models.services.findById(service.id).lean()).toMatchObject({
        deletedAt: expect.any(Date),
        nameKey: deletedNameKeyOf(service.id),
      });
    }
    expect(
      await app.models.services.countDocuments({
        projectId: new Types.ObjectId(project.id),
        deletedAt: null,
      }),
    ).toBe(0);
    expect((await client.get(servicesPath())).body).toEqual({ services: [] });

    app.relay.start();
    const ids = new Set(services.map((s) => s.id));
    await collector.waitFor((m) => ids.has(m.key ?? ''), ROUNDS);
    await waitFor(
      async () =>
        (await app.models.services.countDocuments({
          _id: { $in: [...ids].map((id) => new Types.ObjectId(id)) },
          $or: [{ outboxPending: true }, { 'outbox.0': { $exists: true } }],
        })) === 0,
      { what: 'every outbox to be published' },
    );
    for (const id of ids) {
      expect(collector.messages.filter((m) => m.key === id).map((m) => m.value.serviceId)).toEqual([
        id,
      ]);
    }
  }, 60_000);
});

describe('ten concurrent renames of ten services of a project to one name', () => {
  it('rename exactly one service and answer the other nine 409 CONFLICT', async () => {
    const services = [];
    for (let i = 0; i < 10; i++)
      services.push(await buildService(client, project.id, { name: `own ${i}` }));
    const spellings = services.map((_, i) => (i % 2 ? 'WORKER' : 'Worker'));

    const responses = await Promise.all(
      services.map((service, i) =>
        client.patch(`${servicesPath()}/${service.id}`, { name: spellings[i] }),
      ),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    const winner = responses.findIndex((r) => r.status === 200);
    expect(responses[winner]!.body).toEqual({ ...services[winner], name: spellings[winner] });
    responses.forEach((response, i) => {
      if (i === winner) return;
      expect(response.body).toEqual({
        error: 'CONFLICT',
        message: `A service named "${spellings[i]}" already exists in this project.`,
      });
    });
    const stored = await app.models.services
      .find({ projectId: new Types.ObjectId(project.id) }, { name: 1, nameKey: 1 })
      .lean();
    expect(stored.filter((s) => s.nameKey === 'worker').map((s) => s._id.toHexString())).toEqual([
      services[winner]!.id,
    ]);
    for (const [i, service] of services.entries()) {
      if (i === winner) continue;
      expect(stored.find((s) => s._id.equals(service.id))).toMatchObject({
        name: `own ${i}`,
        nameKey: `own ${i}`,
      });
    }
  });
});

describe('ten concurrent creates of one service name in a project', () => {
  it('create exactly one service and answer the other nine 409 CONFLICT', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => client.post(servicesPath(), { name: 'api' })),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.body).toEqual({
        error: 'CONFLICT',
        message: 'A service named "api" already exists in this project.',
      });
    }
    const created = responses.find((r) => r.status === 201)!.body;
    expect(
      await app.models.services.find({ projectId: new Types.ObjectId(project.id) }).lean(),
    ).toEqual([expect.objectContaining({ _id: new Types.ObjectId(created.id), nameKey: 'api' })]);
    expect((await client.get(servicesPath())).body).toEqual({ services: [created] });
  });
});
