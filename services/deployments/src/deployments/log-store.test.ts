import { Types } from 'mongoose';
import { useHarness } from '../test/harness';
import { LogStore, TRIMMED_MARKER } from './log-store';

const h = useHarness();

/** A store over the harness's database with a small limit, and a log of its own in it. */
async function newLog(limitBytes = 1024) {
  const store = new LogStore(h.models, limitBytes);
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
});
