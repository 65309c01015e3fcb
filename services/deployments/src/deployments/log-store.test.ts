import { Types } from 'mongoose';
import type { Models } from '../models';
import { monitoredModels, sequentialRoundTrips } from '../test/commands';
import { useHarness } from '../test/harness';
import { LogStore, TRIMMED_MARKER } from './log-store';

const h = useHarness();

/** A store over the harness's database with a small limit, and a log of its own in it. */
async function newLog(limitBytes = 1024, models: Models = h.models) {
  const store = new LogStore(models, limitBytes);
  const deploymentId = new Types.ObjectId().toHexString();
  await store.create({ deploymentId, accountId: 'a', projectId: 'p', serviceId: 's' });
  return { store, id: deploymentId };
}

describe('LogStore', () => {
  it('numbers lines from 1 across appends, and gives a follower only the lines after its last', async () => {
    const { store, id } = await newLog();
    await store.append(id, 'one\ntwo\n');
    await store.append(id, 'three');
    await store.append(id, 'four\n');

    expect(await store.read(id)).toBe('one\ntwo\nthree\nfour\n');
    expect(await store.linesAfter(id, 0)).toEqual([
      { n: 1, text: 'one' },
      { n: 2, text: 'two' },
      { n: 3, text: 'three' },
      { n: 4, text: 'four' },
    ]);
    expect(await store.linesAfter(id, 1)).toEqual([
      { n: 2, text: 'two' },
      { n: 3, text: 'three' },
      { n: 4, text: 'four' },
    ]);
    expect(await store.linesAfter(id, 4)).toEqual([]);
    // Each append is one chunk: a follower past line 2 does not read the first one.
    expect(
      await h.models.logChunks.countDocuments({ deploymentId: id, lastLine: { $gt: 2 } }),
    ).toBe(2);
  });

  it('keeps the newest output within the limit, the marker included, lines keeping their numbers', async () => {
    const { store, id } = await newLog(1024);
    for (let i = 1; i <= 60; i++) await store.append(id, `line ${String(i).padStart(3, '0')}\n`);
    const big = Array.from({ length: 200 }, (_, i) => `big ${i + 1}`).join('\n');
    await store.append(id, `${big}\n`);

    const text = await store.read(id);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
    expect(text.startsWith(TRIMMED_MARKER)).toBe(true);
    expect(text.endsWith('big 200\n')).toBe(true);
    expect(text).not.toContain('line 001');
    const lines = await store.linesAfter(id, 0);
    expect(lines.at(-1)).toEqual({ n: 260, text: 'big 200' });
    expect(lines.map((l) => l.n)).toEqual(
      Array.from({ length: lines.length }, (_, i) => 260 - lines.length + 1 + i),
    );
  });

  it('writes only for the claim that holds the log, and only if what it requires still holds', async () => {
    const { store, id } = await newLog();
    expect(await store.append(id, 'by claim 2\n', { attempt: 2 })).toBe(true);
    expect(await store.append(id, 'by claim 1, late\n', { attempt: 1 })).toBe(false);
    expect(await store.append(id, 'x\n', { set: { release: { id: 'r', offset: 10 } } })).toBe(true);
    const racing = await Promise.all(
      [1, 2].map(() =>
        store.append(id, 'once\n', {
          where: { 'release.offset': 10 },
          set: { 'release.offset': 20 },
        }),
      ),
    );
    expect(racing.sort()).toEqual([false, true]);

    expect(await store.read(id)).toBe('by claim 2\nx\nonce\n');
    expect(await store.append(new Types.ObjectId().toHexString(), 'nobody\n')).toBe(false);
  });

  it('leaves no gap in the line numbers when a writer stops between its two writes', async () => {
    // The process dies after the append's first write: its chunk write never reaches the server.
    const dying = crashingChunkWrites(h.models);
    const { id } = await newLog(1024, dying.models);
    const store = new LogStore(dying.models, 1024);
    expect(await store.append(id, 'one\ntwo\n')).toBe(true);
    dying.crashNext();
    await expect(store.append(id, 'lost\n')).rejects.toThrow('the writer stopped here');
    // The next writer (another process, another claim) goes on.
    const next = new LogStore(h.models, 1024);
    expect(await next.append(id, 'three\n', { attempt: 2 })).toBe(true);

    const lines = await next.linesAfter(id, 0);
    expect(lines).toEqual([
      { n: 1, text: 'one' },
      { n: 2, text: 'two' },
      { n: 3, text: 'three' },
    ]);
    expect(await next.lastLine(id)).toBe(3);
    expect(await next.linesAfter(id, 2)).toEqual([{ n: 3, text: 'three' }]);
  });

  it('appends in at most two round trips, with a condition and a field set on the head', async () => {
    const monitored = await monitoredModels(h.config.MONGO_URL, h.config.MONGO_DB);
    try {
      const { store, id } = await newLog(64 * 1024, monitored.models);
      await store.append(id, 'first\n', { attempt: 1 });
      monitored.reset();

      expect(
        await store.append(id, 'second\nthird\n', {
          attempt: 1,
          set: { release: { id: 'r', offset: 5 } },
        }),
      ).toBe(true);

      expect(sequentialRoundTrips(monitored.sent)).toBeLessThanOrEqual(2);
      expect(monitored.sent.filter((c) => c.name === 'insert')).toHaveLength(1);
      expect(await store.linesAfter(id, 1)).toEqual([
        { n: 2, text: 'second' },
        { n: 3, text: 'third' },
      ]);
    } finally {
      await monitored.close();
    }
  });

  it('numbers racing appends of one log one after another, each line once', async () => {
    const { store, id } = await newLog(64 * 1024);
    const writers = Array.from({ length: 4 }, () => new LogStore(h.models, 64 * 1024));
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all(
        writers.map((w, i) => w.append(id, `round ${round} writer ${i}\n`)),
      );
      expect(results).toEqual([true, true, true, true]);
    }
    const lines = await store.linesAfter(id, 0);
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(new Set(lines.map((l) => l.text)).size).toBe(40);
  });
});

/** The models, with the log chunks' insert failing once when told (a writer that died there). */
function crashingChunkWrites(models: Models) {
  let crash = false;
  const logChunks = new Proxy(models.logChunks, {
    get(target, prop, receiver) {
      if (prop === 'create' && crash) {
        crash = false;
        return () => Promise.reject(new Error('the writer stopped here'));
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { models: { ...models, logChunks }, crashNext: () => (crash = true) };
}
