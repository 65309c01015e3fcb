// What projects and services do alike (NamedResourceService over NamedResources), tested through
// the HTTP API of each: `describe.each(FEATURES)`. What only one of them does is in its own
// folder's test file.
import { Types } from 'mongoose';
import { errorBody, useRunning } from '@platform/shared/testing';
import { FEATURES, type Feature, type Place, type Refusal } from '../test/features';
import { readAllPages } from '../test/pages';
import { startTestApp } from '../test/test-app';

const app = useRunning(startTestApp);

/** Each place starts empty: every test has a new account. */
function usePlace(feature: Feature) {
  let place: Place | undefined;
  beforeEach(async () => {
    place = await feature.place(app());
  });
  const model = () => feature.model(app());
  return {
    place: () => place!,
    stored: (id: string) => model().findById(id).lean(),
    countIn: (where: Place, filter: Record<string, unknown> = {}) =>
      model().countDocuments({ ...where.filter, ...filter }),
  };
}

const NAME_REFUSALS: [string, Record<string, unknown>][] = [
  ['the name is blank', { name: '   ' }],
  ['the name is longer than 100 characters', { name: 'n'.repeat(101) }],
  ['the name holds a control character', { name: 'tab\there' }],
  ['the name is not a string', { name: 42 }],
  ['the name is an operator object', { name: { $gt: '' } }],
];

const UNKNOWN_IDS: [string, string][] = [
  ['an unknown id', new Types.ObjectId().toHexString()],
  ['a malformed id', 'not-an-id'],
  ['an id with an operator in it', encodeURIComponent('{"$ne":null}')],
];

describe.each(FEATURES)('$plural', (feature) => {
  const { place, stored, countIn } = usePlace(feature);
  const notFound = errorBody('NOT_FOUND', `${feature.what} not found.`);
  const conflict = (name: string) => errorBody('CONFLICT', feature.nameTaken(name));

  describe('POST', () => {
    it('returns 201 with exactly the fields of one, trims the name, and stores it under its owner', async () => {
      const { client, path, filter, shown } = place();
      const before = Date.now();

      const response = await client.post(path, { name: '  Web shop  ', ...feature.otherFields });

      expect(response.status).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual(feature.fields);
      expect(response.body).toMatchObject({ ...shown, ...feature.otherFields, name: 'Web shop' });
      expect(response.body.id).toMatch(/^[0-9a-f]{24}$/);
      expect(new Date(response.body.createdAt).toISOString()).toBe(response.body.createdAt);
      expect(Date.parse(response.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(await stored(response.body.id)).toMatchObject({
        ...filter,
        ...feature.otherFields,
        accountId: client.accountId,
        name: 'Web shop',
        nameKey: 'web shop',
        deletedAt: null,
        outbox: [],
      });
    });

    it('returns 409 CONFLICT when the owner has one of that name in another letter case', async () => {
      await place().build({ name: 'Billing API' });

      const response = await place().client.post(place().path, { name: 'billing api' });

      expect(response.status).toBe(409);
      expect(response.body).toEqual(conflict('billing api'));
      expect(await countIn(place())).toBe(1);
    });

    it('lets another owner use the same name', async () => {
      const other = await feature.besides(app(), place());
      await place().build({ name: 'Shared name' });

      const response = await other.client.post(other.path, { name: 'Shared name' });

      expect(response.status).toBe(201);
      expect(response.body).toMatchObject(other.shown);
      for (const where of [place(), other]) {
        expect(await countIn(where, { nameKey: 'shared name' })).toBe(1);
      }
    });

    it.each<Refusal>([
      ['the name is missing', { ...feature.otherFields }, 'name'],
      ...NAME_REFUSALS.map(([why, body]): Refusal => [why, body, 'name']),
      ...feature.invalidCreates,
    ])('returns 400 VALIDATION_ERROR when %s', async (_case, body, path) => {
      const response = await place().client.post(place().path, body);

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        ...errorBody('VALIDATION_ERROR'),
        details: [{ path, message: expect.any(String) }],
      });
      expect(await countIn(place())).toBe(0);
    });
  });

  describe('GET one', () => {
    it('returns 200 with exactly the fields of one', async () => {
      const made = await place().build({ name: 'Docs', ...feature.otherFields });

      const response = await place().client.get(`${place().path}/${made.id}`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual(made);
      expect(Object.keys(response.body).sort()).toEqual(feature.fields);
    });

    it.each(UNKNOWN_IDS)('returns 404 NOT_FOUND for %s', async (_case, id) => {
      const response = await place().client.get(`${place().path}/${id}`);

      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    });
  });

  describe('GET the list', () => {
    it("lists only the owner's, newest first, each item with exactly the list's fields", async () => {
      const first = await place().build({ name: 'first' });
      const second = await place().build({ name: 'second' });
      const third = await place().build({ name: 'third' });
      await (await feature.besides(app(), place())).build({ name: 'not here' });

      const response = await place().client.get(place().path);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        [feature.plural]: [third, second, first].map(feature.listItem),
      });
      for (const item of response.body[feature.plural]) {
        expect(Object.keys(item).sort()).toEqual(feature.listFields);
      }
    });

    it('is empty when the owner has none', async () => {
      const response = await place().client.get(place().path);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ [feature.plural]: [] });
    });

    it('pages with limit and cursor, and leaves nextCursor out on the last page', async () => {
      const built = [];
      for (let i = 0; i < 5; i++) built.push(await place().build());

      const list = { path: place().path, key: feature.plural };
      const pages = await readAllPages(place().client, list, 2);

      expect(pages.flat().map((item) => item.id)).toEqual(built.reverse().map((b) => b.id));
      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    });

    it('returns 400 VALIDATION_ERROR for a bad limit, a forged cursor or an unknown parameter', async () => {
      const forged = Buffer.from(JSON.stringify([Date.now(), 'not-an-object-id'])).toString(
        'base64url',
      );
      for (const query of [
        '?limit=0',
        '?limit=101',
        '?limit=abc',
        '?limit=5&limit=6',
        `?cursor=${forged}`,
        '?cursor=forged',
        '?cursor=%7B%7D',
        '?owner=me',
        '?sort=name',
      ]) {
        const response = await place().client.get(`${place().path}${query}`);
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({
          error: 'VALIDATION_ERROR',
          details: [expect.any(Object)],
        });
      }
    });
  });

  describe('PATCH', () => {
    const patch = (id: string, body: unknown) =>
      place().client.patch(`${place().path}/${id}`, body);

    it('renames it, keeps the rest and returns the whole of it', async () => {
      const made = await place().build({ name: 'Old name', ...feature.otherFields });

      const response = await patch(made.id, { name: ' New name ' });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ...made, name: 'New name' });
      expect(await stored(made.id)).toMatchObject({
        ...feature.otherFields,
        name: 'New name',
        nameKey: 'new name',
      });
    });

    it('allows a change of letter case of its own name', async () => {
      const made = await place().build({ name: 'lower' });

      const response = await patch(made.id, { name: 'LOWER' });

      expect(response.status).toBe(200);
      expect(response.body.name).toBe('LOWER');
    });

    it("returns 409 CONFLICT when another of the owner's has the new name in any letter case", async () => {
      await place().build({ name: 'Taken' });
      const made = await place().build({ name: 'Mine' });

      const response = await patch(made.id, { name: 'TAKEN' });

      expect(response.status).toBe(409);
      expect(response.body).toEqual(conflict('TAKEN'));
      expect(await stored(made.id)).toMatchObject({ name: 'Mine', nameKey: 'mine' });
    });

    it('frees the old name for a new one', async () => {
      const made = await place().build({ name: 'Before rename' });
      await patch(made.id, { name: 'After rename' });

      const response = await place().client.post(place().path, { name: 'Before rename' });

      expect(response.status).toBe(201);
    });

    it.each<Refusal>([
      ['the body is empty', {}, feature.emptyPatchPath],
      ['the name is blank', { name: '' }, 'name'],
      ['the name is an operator object', { name: { $ne: null } }, 'name'],
      ['the name is a pattern object', { name: { $regex: '.*' } }, 'name'],
      ['a field is unknown', { name: 'ok', createdAt: '2020-01-01T00:00:00.000Z' }, 'createdAt'],
    ])('returns 400 VALIDATION_ERROR when %s and changes nothing', async (_case, body, path) => {
      const made = await place().build({ name: 'Untouched' });

      const response = await patch(made.id, body);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'VALIDATION_ERROR', details: [{ path }] });
      expect(await stored(made.id)).toMatchObject({
        name: 'Untouched',
        createdAt: new Date(made.createdAt),
      });
    });

    it('returns 404 NOT_FOUND for an unknown or malformed id, even when the name is taken', async () => {
      await place().build({ name: 'existing' });

      for (const id of [new Types.ObjectId().toHexString(), 'zzz']) {
        for (const body of [{ name: 'free' }, { name: 'existing' }]) {
          const response = await patch(id, body);
          expect(response.status).toBe(404);
          expect(response.body).toEqual(notFound);
        }
      }
    });
  });

  describe('DELETE', () => {
    const remove = (id: string) => place().client.delete(`${place().path}/${id}`);

    it('returns 204 with no body, and it reads 404 and leaves the list at once', async () => {
      const made = await place().build({ name: 'doomed' });

      const response = await remove(made.id);

      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect((await place().client.get(`${place().path}/${made.id}`)).status).toBe(404);
      expect((await place().client.get(place().path)).body).toEqual({ [feature.plural]: [] });
      const left = await stored(made.id);
      if (left) {
        // The cascade may already have removed it; until then the mark stays.
        expect(left.deletedAt).toBeInstanceOf(Date);
        expect(left.nameKey).not.toBe('doomed');
      }
    });

    it('frees the name for a new one at once', async () => {
      const made = await place().build({ name: 'Phoenix' });
      await remove(made.id);

      const response = await place().client.post(place().path, { name: 'phoenix' });

      expect(response.status).toBe(201);
      expect(response.body.id).not.toBe(made.id);
      const list = (await place().client.get(place().path)).body[feature.plural];
      expect(list.map((item: { id: string }) => item.id)).toEqual([response.body.id]);
    });

    describe('with the relay held, so the queued event can be read before it goes out', () => {
      beforeEach(() => app().relay.stop());
      afterEach(() => app().relay.start());

      it('writes its deletion event, matching the shared schema, into its outbox', async () => {
        const made = await place().build();

        await remove(made.id);

        const left = await stored(made.id);
        expect(left?.outboxPending).toBe(true);
        expect(left?.outbox).toHaveLength(1);
        const [entry] = left!.outbox;
        expect(entry).toMatchObject({ topic: feature.deletedTopic, key: made.id });
        expect(feature.parseDeletedEvent(entry!.payload)).toEqual({
          eventId: entry!.eventId,
          type: feature.deletedTopic,
          occurredAt: expect.any(String),
          ...feature.deletedEvent(place(), made),
        });
      });

      it('returns 404 NOT_FOUND for one deleted before, and queues nothing more', async () => {
        const made = await place().build();
        expect((await remove(made.id)).status).toBe(204);

        const again = await remove(made.id);

        expect(again.status).toBe(404);
        expect(again.body).toEqual(notFound);
        expect((await stored(made.id))?.outbox).toHaveLength(1);
      });
    });
  });
});

// Last in the file: the seeded documents would slow every later query down on FerretDB.
describe.each(FEATURES)('the quota of $plural', (feature) => {
  const { place, countIn } = usePlace(feature);

  it(`returns 409 CONFLICT once the owner has 1,000, and a deleted one no longer counts`, async () => {
    const { client, path, filter } = place();
    const createdAt = new Date();
    await feature.model(app()).insertMany(
      Array.from({ length: feature.quota - 1 }, (_, i) => ({
        ...filter,
        accountId: client.accountId,
        name: `seeded ${i}`,
        nameKey: `seeded ${i}`,
        createdAt,
      })),
    );
    const last = await client.post(path, { name: 'the thousandth' });
    expect(last.status).toBe(201);

    const response = await client.post(path, { name: 'one too many' });

    expect(response.status).toBe(409);
    expect(response.body).toEqual(errorBody('CONFLICT', feature.quotaReached));
    expect(await countIn(place())).toBe(1000);
    expect((await client.delete(`${path}/${last.body.id}`)).status).toBe(204);
    expect((await client.post(path, { name: 'one too many' })).status).toBe(201);
  });
});
