// Requests that race for one project or service, or for one name, over real HTTP against the real
// database: what MongoDB promises (one conditional write wins, a unique index refuses the rest
// with 11000) is what these rely on, so a stand-in that breaks a promise fails here.
import { Types } from 'mongoose';
import { errorBody, useRunning, waitFor } from '@platform/shared/testing';
import { FEATURES, type NamedBody, type Place } from '../test/features';
import { startTestApp, useDeletionEvents } from '../test/test-app';
import { deletedNameKeyOf } from './name-key';

const app = useRunning(startTestApp);
const collector = useDeletionEvents(app);

const ROUNDS = 30;
/**
 * Sent together, a DELETE nearly always reaches the database before a PATCH (which has a body to
 * parse); sent a tick later, nearly always after it. Odd rounds wait that tick, so both orders
 * and the close calls between them are raced.
 */
const inRound = <T>(round: number, request: () => Promise<T>) =>
  round % 2 ? new Promise((resolve) => setImmediate(resolve)).then(request) : request();

const objectIds = (ids: Iterable<string>) => [...ids].map((id) => new Types.ObjectId(id));

describe.each(FEATURES)('$plural', (feature) => {
  let place: Place;
  beforeEach(async () => {
    place = await feature.place(app());
  });
  const model = () => feature.model(app());
  const notFound = errorBody('NOT_FOUND', `${feature.what} not found.`);

  /** `count` of them, built one after the other (names `${prefix} ${i}`). */
  async function buildMany(count: number, prefix: string) {
    const built: NamedBody[] = [];
    for (let i = 0; i < count; i++) built.push(await place.build({ name: `${prefix} ${i}` }));
    return built;
  }

  it('a PATCH racing a DELETE of the same one is applied before the deletion or finds it gone, never brings it back, and its deletion event goes out once', async () => {
    const built = await buildMany(ROUNDS, 'raced');
    const change = (i: number) => ({ name: `renamed ${i}`, ...feature.otherFields });

    // The relay waits until the marks are checked: the cascade would remove the documents.
    await app().relay.stop();
    try {
      const rounds = [];
      for (const [i, made] of built.entries()) {
        const path = `${place.path}/${made.id}`;
        const [patch, del] = await Promise.all([
          place.client.patch(path, change(i)),
          inRound(i, () => place.client.delete(path)),
        ]);
        rounds.push({ made, patch, del, get: await place.client.get(path) });
      }

      for (const [i, { made, patch, del, get }] of rounds.entries()) {
        expect(del.status).toBe(204);
        if (patch.status === 200) {
          expect(patch.body).toEqual({ ...made, ...change(i) });
        } else {
          expect(patch.status).toBe(404);
          expect(patch.body).toEqual(notFound);
        }
        expect(get.status).toBe(404);
      }
      // Deleted for good: every document keeps its mark and the key that frees its name.
      for (const { made } of rounds) {
        expect(await model().findById(made.id).lean()).toMatchObject({
          deletedAt: expect.any(Date),
          nameKey: deletedNameKeyOf(made.id),
        });
      }
      expect(await model().countDocuments({ ...place.filter, deletedAt: null })).toBe(0);
      expect((await place.client.get(place.path)).body).toEqual({ [feature.plural]: [] });
    } finally {
      app().relay.start();
    }

    // Once each: every outbox published and emptied, one message per document on the topic.
    const ids = new Set(built.map((made) => made.id));
    await collector().waitFor((m) => ids.has(m.key ?? ''), ROUNDS);
    await waitFor(
      async () =>
        (await model().countDocuments({
          _id: { $in: objectIds(ids) },
          $or: [{ outboxPending: true }, { 'outbox.0': { $exists: true } }],
        })) === 0,
      { what: 'every outbox to be published' },
    );
    for (const made of built) {
      expect(collector().messages.filter((m) => m.key === made.id)).toEqual([
        expect.objectContaining({
          topic: feature.deletedTopic,
          value: expect.objectContaining(feature.deletedEvent(place, made)),
        }),
      ]);
    }
  }, 60_000);

  it('ten concurrent renames of ten of them to one name rename exactly one and answer the other nine 409 CONFLICT', async () => {
    const built = await buildMany(10, 'own');
    // One name in ten spellings: the names differ only in letter case, so they are one name.
    const spellings = built.map((_, i) => (i % 2 ? 'CONTESTED' : 'Contested'));

    const responses = await Promise.all(
      built.map((made, i) =>
        place.client.patch(`${place.path}/${made.id}`, { name: spellings[i] }),
      ),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    const winner = responses.findIndex((r) => r.status === 200);
    expect(responses[winner]!.body).toEqual({ ...built[winner], name: spellings[winner] });
    responses.forEach((response, i) => {
      if (i === winner) return;
      expect(response.body).toEqual(errorBody('CONFLICT', feature.nameTaken(spellings[i]!)));
    });
    const stored = await model().find(place.filter, { name: 1, nameKey: 1 }).lean();
    expect(stored.filter((d) => d.nameKey === 'contested').map((d) => d._id.toHexString())).toEqual(
      [built[winner]!.id],
    );
    for (const [i, made] of built.entries()) {
      if (i === winner) continue;
      expect(stored.find((d) => d._id.equals(made.id))).toMatchObject({
        name: `own ${i}`,
        nameKey: `own ${i}`,
      });
    }
  });

  it('ten concurrent creates of one name create exactly one and answer the other nine 409 CONFLICT', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => place.client.post(place.path, { name: 'Only once' })),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.body).toEqual(errorBody('CONFLICT', feature.nameTaken('Only once')));
    }
    const created = responses.find((r) => r.status === 201)!.body;
    expect(await model().find(place.filter).lean()).toEqual([
      expect.objectContaining({ _id: new Types.ObjectId(created.id), nameKey: 'only once' }),
    ]);
    expect((await place.client.get(place.path)).body).toEqual({
      [feature.plural]: [feature.listItem(created)],
    });
  });
});
